import type { Tx } from "../db/transaction.ts";

/**
 * The tenant's ingestion lock: file chunks and review decisions of one tenant commit one at a time
 * (docs/decisions/0010). The stages that read across keys (suspects, returns and the orphans
 * waiting for a late original) are exact under it without SERIALIZABLE retries.
 */
export async function lockTenantIngestion(tx: Tx, tenantId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`clearline.ingest:${tenantId}`]);
}
