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
