/**
 * Undos of named originals (docs/decisions/0038): the originals' dedup marks locked and read, what
 * applied undos took off them, and the marks of undos refused as input released. Set-based: one
 * statement per stage and batch.
 */
import type { Queryable } from "../../db/pool.ts";
import type { KeyState } from "../record-states.ts";

export interface UndoOriginalRow {
  natural_key: string; state: KeyState; amount_minor: bigint; undone_minor: bigint; currency: string; transfer_key: string | null;
}

/**
 * The originals' marks, locked until commit (FOR UPDATE, in key order so that two batches lock
 * them in one order): what serialises the undos of one original. A second transaction waits here
 * and then reads the undone amount the first committed.
 */
export async function lockOriginals(tx: Queryable, tenantId: string, naturalKeys: readonly string[]): Promise<Map<string, UndoOriginalRow>> {
  if (naturalKeys.length === 0) return new Map();
  const { rows } = await tx.query<UndoOriginalRow>({
    name: "clearline.records.undo-lock-originals",
    text: `SELECT natural_key, state, amount_minor, undone_minor, currency, transfer_key FROM ingest_record_key
            WHERE tenant_id = $1 AND natural_key = ANY($2::text[]) ORDER BY natural_key FOR UPDATE`,
    values: [tenantId, [...new Set(naturalKeys)].sort()],
  });
  return new Map(rows.map((r) => [r.natural_key, { ...r, amount_minor: BigInt(r.amount_minor), undone_minor: BigInt(r.undone_minor) }]));
}

/** Adds what applied undos took off their originals; the column's CHECK keeps it at most the original's amount. */
export async function addUndone(tx: Queryable, tenantId: string, undone: ReadonlyMap<string, bigint>): Promise<void> {
  if (undone.size === 0) return;
  const keys = [...undone.keys()];
  await tx.query({
    name: "clearline.records.undo-add-undone",
    text: `UPDATE ingest_record_key k SET undone_minor = k.undone_minor + u.amount_minor
             FROM unnest($2::text[], $3::bigint[]) AS u(natural_key, amount_minor)
            WHERE k.tenant_id = $1 AND k.natural_key = u.natural_key`,
    values: [tenantId, keys, keys.map((k) => (undone.get(k) ?? 0n).toString())],
  });
}

/**
 * Releases the marks THIS transaction claimed for undos it refused as input (an unknown or
 * unapplied original, another currency, more than remains): no other transaction ever saw them, so
 * the caller may send the corrected record again under its key, as before the core. A mark that
 * was ever committed is never deleted: the caller passes only keys its own claim inserted (fresh).
 */
export async function releaseFreshKeys(tx: Queryable, tenantId: string, freshKeys: readonly string[]): Promise<void> {
  if (freshKeys.length === 0) return;
  await tx.query("DELETE FROM ingest_record_key WHERE tenant_id = $1 AND natural_key = ANY($2::text[])",
    [tenantId, freshKeys]);
}
