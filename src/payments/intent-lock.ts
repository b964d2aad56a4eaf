import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { resourceTimeSql } from "./payments.ts";

/**
 * A transaction-scoped advisory lock on an intent (tenant + client_reference). It serializes the
 * requests of one intent, and it lets a status query see that an intent is being processed right
 * now, though its rows are not committed yet. A hash collision only makes two intents wait for
 * each other, or a status query say in_progress for a moment.
 */
export async function lockIntent(tx: Queryable, tenantId: string, clientReference: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [tenantId, clientReference]);
}

export async function isIntentInProgress(db: Queryable, tenantId: string, clientReference: string): Promise<boolean> {
  const { rows } = await db.query<{ free: boolean }>(
    `SELECT pg_try_advisory_xact_lock_shared(hashtext($1), hashtext($2)) AS free`,
    [tenantId, clientReference],
  );
  return rows[0]?.free === false;
}

/**
 * The intent locks of a group-committed batch (docs/decisions/0043) in one statement, taken in the
 * order of their lock ids, so two batches (or a batch and a lone request) sharing intents take
 * them in one order. Re-entrant: two references of one batch whose hashes collide lock once.
 * Resolves to the transaction's start time as the payment resource shows it: the created_at of
 * every payment this transaction inserts (its default is now()), known before the insert so the
 * payment rows, their events and the stored responses can go out as one statement (0051).
 */
export async function lockIntents(tx: Queryable, tenantId: string, clientReferences: readonly string[]): Promise<string> {
  const { rows } = await tx.query<{ transaction_at: string }>(
    {
      name: "clearline.payments.lock-intents",
      text: `SELECT ${resourceTimeSql("now()")} AS transaction_at
               FROM (SELECT count(pg_advisory_xact_lock(l.tenant_hash, l.reference_hash)) AS locked
                       FROM (SELECT DISTINCT hashtext($1) AS tenant_hash, hashtext(r) AS reference_hash FROM unnest($2::text[]) AS r
                              ORDER BY 1, 2) AS l) AS taken`,
    },
    [tenantId, clientReferences],
  );
  assert(rows.length === 1, "the intent locks statement answers one row");
  return (rows[0] as { transaction_at: string }).transaction_at;
}
