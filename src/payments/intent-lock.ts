import type { Queryable } from "../db/pool.ts";

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
 */
export async function lockIntents(tx: Queryable, tenantId: string, clientReferences: readonly string[]): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(l.tenant_hash, l.reference_hash)
       FROM (SELECT DISTINCT hashtext($1) AS tenant_hash, hashtext(r) AS reference_hash FROM unnest($2::text[]) AS r
              ORDER BY 1, 2) AS l`,
    [tenantId, clientReferences],
  );
}
