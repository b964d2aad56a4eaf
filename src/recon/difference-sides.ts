import type { Queryable } from "../db/pool.ts";
import { transfersWithLegs, type ShownTransfer } from "../ledger/index.ts";
import type { Difference } from "./differences.ts";

/**
 * Both sides of open differences, as a person explains one: each bank line with its own dates,
 * references and text, and each of our transfers with its kind, value date and legs (issue 33).
 */
export interface TheirLine {
  itemKey: string;
  bookingDate: string;
  valueDate: string | null;
  direction: "C" | "D";
  amountMinor: bigint;
  currency: string;
  refs: string[];
  description: string | null;
}

export interface DifferenceSides {
  /** By `<account id>\u0000<item key>` (theirLineOf reads it). */
  theirs: Map<string, TheirLine>;
  ours: Map<string, ShownTransfer>;
}

export async function differenceSides(
  db: Queryable, tenantId: string, differences: readonly Difference[],
): Promise<DifferenceSides> {
  // An item key is its identity within its account (the primary key): probe by both.
  const joined = differences.flatMap((d) => d.itemKeys.map((k) => `${d.accountId}\u0000${k}`));
  const pairs = [...new Set(joined)]
    .map((pair) => pair.split("\u0000") as [string, string]);
  const transferKeys = [...new Set(differences.flatMap((d) => d.transferKeys))];
  const { rows } = pairs.length === 0 ? { rows: [] } : await db.query<{
    account_id: string; item_key: string; booking_date: string; value_date: string | null;
    direction: "C" | "D"; amount_minor: string; currency: string; refs: string[];
    description: string | null;
  }>(
    `SELECT account_id, item_key, to_char(booking_date, 'YYYY-MM-DD') AS booking_date,
            to_char(value_date, 'YYYY-MM-DD') AS value_date, direction, amount_minor::text,
            currency, refs, description
       FROM unnest($2::text[], $3::text[]) AS w(account_id, item_key)
       JOIN recon_external_item USING (account_id, item_key)
      WHERE tenant_id = $1`,
    [tenantId, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  );
  const theirs = new Map(rows.map((r) => [`${r.account_id}\u0000${r.item_key}`, {
    itemKey: r.item_key, bookingDate: r.booking_date, valueDate: r.value_date,
    direction: r.direction, amountMinor: BigInt(r.amount_minor), currency: r.currency,
    refs: r.refs, description: r.description,
  }]));
  const shown = await transfersWithLegs(db, tenantId, transferKeys);
  return { theirs, ours: new Map(shown.map((t) => [t.transferKey, t])) };
}

export function theirLineOf(
  sides: DifferenceSides, accountId: string, itemKey: string,
): TheirLine | undefined {
  return sides.theirs.get(`${accountId}\u0000${itemKey}`);
}
