/**
 * Undos of named originals (docs/decisions/0038): the originals' dedup marks locked and read with
 * the legs of their transfers, what applied undos took off them written with the undos' own states,
 * and the marks of undos refused as input released. Set-based: one statement per step and batch.
 */
import type { Queryable } from "../../db/pool.ts";
import type { KeyState } from "../record-states.ts";
import type { KeyStateChange } from "./keys.ts";

export interface UndoOriginalRow {
  natural_key: string; state: KeyState; amount_minor: bigint; undone_minor: bigint; currency: string; transfer_key: string | null;
  legs: Array<{ accountId: string; direction: "D" | "C" }>;   // of its transfer, in entry order
}

/**
 * The originals' marks, locked until commit (FOR UPDATE OF the mark, in key order so that two
 * batches lock them in one order), with the legs of their transfers: what serialises the undos of
 * one original. A second transaction waits here and then reads the undone amount the first committed.
 */
export async function lockOriginalsToUndo(
  tx: Queryable, tenantId: string, naturalKeys: readonly string[],
): Promise<Map<string, UndoOriginalRow>> {
  if (naturalKeys.length === 0) return new Map();
  const { rows } = await tx.query<Omit<UndoOriginalRow, "legs"> & { accounts: string[] | null; directions: Array<"D" | "C"> | null }>({
    name: "clearline.records.undo-lock-originals",
    // The transfer's entries are read once, both columns in one aggregate.
    // Each mark found and locked by a probe of its key, in key order (docs/decisions/0052).
    text: `SELECT k.natural_key, k.state, k.amount_minor, k.undone_minor, k.currency, k.transfer_key, e.accounts, e.directions
             FROM (SELECT DISTINCT unnest($2::text[]) ORDER BY 1 OFFSET 0) AS w(natural_key)
            CROSS JOIN LATERAL (
               SELECT natural_key, state, amount_minor, undone_minor, currency, transfer_key
                 FROM record_key
                WHERE tenant_id = $1 AND natural_key = w.natural_key FOR UPDATE) k
             LEFT JOIN LATERAL (
               SELECT array_agg(x.account_id ORDER BY x.entry_key) AS accounts, array_agg(x.direction ORDER BY x.entry_key) AS directions
                 FROM ledger_entry x WHERE x.tenant_id = $1 AND x.transfer_key = k.transfer_key
             ) e ON true`,
    values: [tenantId, [...new Set(naturalKeys)].sort()],
  });
  return new Map(rows.map((r) => [r.natural_key, {
    natural_key: r.natural_key, state: r.state, amount_minor: BigInt(r.amount_minor), undone_minor: BigInt(r.undone_minor), currency: r.currency, transfer_key: r.transfer_key,
    legs: (r.accounts ?? []).map((accountId, i) => ({ accountId, direction: r.directions?.[i] ?? "D" })),
  }]));
}

/**
 * In one statement: what applied undos took off their originals (the column's CHECK keeps it at
 * most the original's amount) and the undos' own marks (applied and linked, or rejected).
 */
export async function settleUndoMarks(tx: Queryable, tenantId: string, undone: ReadonlyMap<string, bigint>, states: readonly KeyStateChange[]): Promise<void> {
  if (undone.size === 0 && states.length === 0) return;
  const originals = [...undone.keys()];
  await tx.query({
    name: "clearline.records.undo-settle",
    text: `WITH u AS (
             UPDATE record_key k SET undone_minor = k.undone_minor + u.amount_minor
               FROM unnest($2::text[], $3::bigint[]) AS u(natural_key, amount_minor)
              WHERE k.tenant_id = $1 AND k.natural_key = u.natural_key
           )
           UPDATE record_key k SET state = s.state, transfer_key = s.transfer_key,
             matched_key = s.matched_key
             FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS s(natural_key, state, transfer_key, matched_key)
            WHERE k.tenant_id = $1 AND k.natural_key = s.natural_key`,
    values: [tenantId, originals, originals.map((k) => (undone.get(k) ?? 0n).toString()),
      states.map((s) => s.naturalKey), states.map((s) => s.state), states.map((s) => s.transferKey), states.map((s) => s.matchedKey)],
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
  await tx.query(
    `DELETE FROM record_key WHERE tenant_id = $1 AND natural_key = ANY($2::text[])`,
    [tenantId, freshKeys]);
}
