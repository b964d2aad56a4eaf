import type { Queryable } from "../db/pool.ts";
import type { PostOutcome } from "./post-outcome.ts";
import { entryKeyOf, type Leg, type Transfer } from "./transfer.ts";

/**
 * What the ledger holds under transfer keys, and how a transfer posted again compares with it:
 * the one comparison behind `exists` and `exists_with_different_<field>`, for single and batch
 * posting alike.
 */
export interface StoredTransfer {
  kind: string;
  valueDate: string;
  settlementDate: string;   // the value date for a transfer posted before 0035 (0101)
  entries: Map<string, { account_id: string; direction: string; amount_minor: bigint; currency: string }>;
}

export async function storedTransfers(tx: Queryable, tenantId: string, keys: string[]): Promise<Map<string, StoredTransfer>> {
  const unique = [...new Set(keys)];
  const heads = await tx.query<{ transfer_key: string; kind: string; value_date: string; settlement_date: string }>(
    // One probe per key, here and below (docs/decisions/0052).
    `SELECT t.transfer_key, t.kind, to_char(t.value_date, 'YYYY-MM-DD') AS value_date,
            to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD') AS settlement_date
       FROM unnest($2::text[]) AS w(transfer_key)
      CROSS JOIN LATERAL (SELECT transfer_key, kind, value_date, settlement_date FROM transfer WHERE tenant_id = $1 AND transfer_key = w.transfer_key OFFSET 0) t`,
    [tenantId, unique],
  );
  const stored = new Map<string, StoredTransfer>(heads.rows.map((r) => [r.transfer_key, {
    kind: r.kind, valueDate: r.value_date, settlementDate: r.settlement_date, entries: new Map(),
  }]));
  const entries = await tx.query<{ transfer_key: string; entry_key: string; account_id: string; direction: string; amount_minor: bigint; currency: string }>(
    `SELECT e.* FROM unnest($2::text[]) AS w(transfer_key)
      CROSS JOIN LATERAL (
        SELECT transfer_key, entry_key, account_id, direction, amount_minor, currency FROM ledger_entry
         WHERE tenant_id = $1 AND transfer_key = w.transfer_key OFFSET 0) e`,
    [tenantId, unique],
  );
  for (const row of entries.rows) stored.get(row.transfer_key)?.entries.set(row.entry_key, row);
  return stored;
}

export function compareStored(transfer: Transfer, stored: StoredTransfer | undefined): PostOutcome | undefined {
  if (!stored) return undefined;
  if (stored.kind !== transfer.kind) return "exists_with_different_kind";
  if (stored.valueDate !== transfer.valueDate) return "exists_with_different_value_date";
  if (stored.entries.size !== transfer.legs.length) return "exists_with_different_legs";
  for (const [index, leg] of transfer.legs.entries()) {
    const entry = stored.entries.get(entryKeyOf(transfer.transferKey, index));
    if (!entry) return "exists_with_different_legs";
    const difference = legDifference(entry, leg);
    if (difference) return difference;
  }
  return "exists";
}

function legDifference(entry: { account_id: string; direction: string; amount_minor: bigint; currency: string }, leg: Leg): PostOutcome | undefined {
  if (entry.account_id !== leg.accountId) return "exists_with_different_account";
  if (entry.direction !== leg.direction) return "exists_with_different_direction";
  if (entry.currency !== leg.currency) return "exists_with_different_currency";
  if (entry.amount_minor !== leg.amountMinor) return "exists_with_different_amount";
  return undefined;
}

/** The legs (account and side) of stored transfers, in entry order: what a return mirrors. */
export async function transferLegs(tx: Queryable, tenantId: string, keys: readonly string[]): Promise<Map<string, Array<{ accountId: string; direction: "D" | "C" }>>> {
  const legs = new Map<string, Array<{ accountId: string; direction: "D" | "C" }>>();
  if (keys.length === 0) return legs;
  const { rows } = await tx.query<{ transfer_key: string; account_id: string; direction: "D" | "C" }>(
    // One probe per key (docs/decisions/0052).
    `SELECT e.transfer_key, e.account_id, e.direction FROM unnest($2::text[]) AS w(transfer_key)
      CROSS JOIN LATERAL (
        SELECT transfer_key, entry_key, account_id, direction FROM ledger_entry
         WHERE tenant_id = $1 AND transfer_key = w.transfer_key OFFSET 0) e
      ORDER BY e.transfer_key, e.entry_key`,
    [tenantId, [...new Set(keys)]],
  );
  for (const row of rows) {
    const list = legs.get(row.transfer_key) ?? [];
    list.push({ accountId: row.account_id, direction: row.direction });
    legs.set(row.transfer_key, list);
  }
  return legs;
}

export interface ShownTransfer {
  transferKey: string; kind: string; valueDate: string; sourceRef: string | null; createdAt: string;
  /** docs/decisions/0101: the value date, not recorded, for a transfer posted before 0035. */
  settlementDate: string; settlementDateRecorded: boolean;
  legs: Array<{ accountId: string; direction: "D" | "C"; amountMinor: bigint; currency: string }>;
}

/** Transfers by key with their legs, in the order they were posted: what a record's history shows. */
export async function transfersWithLegs(db: Queryable, tenantId: string, keys: readonly string[]): Promise<ShownTransfer[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ transfer_key: string; kind: string; value_date: string; source_ref: string | null; created_at: string; settlement_date: string; settlement_date_recorded: boolean; account_id: string; direction: "D" | "C"; amount_minor: bigint; currency: string }>(
    `SELECT t.transfer_key, t.kind, to_char(t.value_date, 'YYYY-MM-DD') AS value_date, t.source_ref,
            to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at,
            to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD') AS settlement_date,
            t.settlement_date IS NOT NULL AS settlement_date_recorded,
            e.account_id, e.direction, e.amount_minor, e.currency
       FROM transfer t JOIN ledger_entry e ON e.tenant_id = t.tenant_id AND e.transfer_key = t.transfer_key
      WHERE t.tenant_id = $1 AND t.transfer_key = ANY($2::text[])
      ORDER BY t.created_at, t.transfer_key, e.entry_key`,
    [tenantId, [...new Set(keys)]],
  );
  const shown = new Map<string, ShownTransfer>();
  for (const row of rows) {
    const transfer = shown.get(row.transfer_key) ?? {
      transferKey: row.transfer_key, kind: row.kind, valueDate: row.value_date,
      sourceRef: row.source_ref, createdAt: row.created_at, settlementDate: row.settlement_date,
      settlementDateRecorded: row.settlement_date_recorded, legs: [],
    };
    transfer.legs.push({ accountId: row.account_id, direction: row.direction, amountMinor: BigInt(row.amount_minor), currency: row.currency });
    shown.set(row.transfer_key, transfer);
  }
  return [...shown.values()];
}

/**
 * The settlement date of each transfer by key (docs/decisions/0101): its value date for one
 * posted before migration 0035. Keys never posted are absent.
 */
export async function settlementDatesOf(
  db: Queryable, tenantId: string, keys: readonly string[],
): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<{ transfer_key: string; settlement_date: string }>(
    // One probe per key (docs/decisions/0052).
    `SELECT t.transfer_key,
            to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD') AS settlement_date
       FROM unnest($2::text[]) AS w(transfer_key)
      CROSS JOIN LATERAL (
        SELECT transfer_key, settlement_date, value_date FROM transfer
         WHERE tenant_id = $1 AND transfer_key = w.transfer_key OFFSET 0) t`,
    [tenantId, [...new Set(keys)]],
  );
  return new Map(rows.map((r) => [r.transfer_key, r.settlement_date]));
}
