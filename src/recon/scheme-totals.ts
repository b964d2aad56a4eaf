import type { Queryable } from "../db/pool.ts";

/**
 * Settlement totals of the card channel for one date, as ISO 8583 reconciliation messages carry
 * them (fields 74-77, 86-89, 97): counts and amounts of credits, debits and their reversals.
 * Pure values; the comparison and its run live beside it, our records are read by cards/.
 */
export const totalsCategories = ["credits", "creditReversals", "debits", "debitReversals"] as const;
export type TotalsCategory = (typeof totalsCategories)[number];

export interface CategoryTotal {
  count: number;
  amountMinor: bigint;
}

export type SettlementTotals = Record<TotalsCategory, CategoryTotal> & {
  netMinor?: bigint;   // field 97 when given: credits - credit reversals - debits + debit reversals, from the acquirer's view
};

/** How each category moves the net (field 97, credits positive): a reversal undoes its original. */
export const categorySign: Readonly<Record<TotalsCategory, 1n | -1n>> = { credits: 1n, creditReversals: -1n, debits: -1n, debitReversals: 1n };

export function netOf(totals: SettlementTotals): bigint {
  let net = 0n;
  for (const category of totalsCategories) net += categorySign[category] * totals[category].amountMinor;
  return net;
}

/** Categories whose count or amount differ; a net (field 97) that is not the categories' net is a mismatch too. */
export function mismatchedCategories(theirs: SettlementTotals, ours: SettlementTotals): TotalsCategory[] {
  return totalsCategories.filter((c) => theirs[c].count !== ours[c].count || theirs[c].amountMinor !== ours[c].amountMinor);
}

export function totalsAgree(theirs: SettlementTotals, ours: SettlementTotals): boolean {
  return mismatchedCategories(theirs, ours).length === 0 && (theirs.netMinor === undefined || theirs.netMinor === netOf(ours));
}

export function totalsJson(totals: SettlementTotals): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const category of totalsCategories) json[category] = { count: totals[category].count, amountMinor: totals[category].amountMinor.toString() };
  if (totals.netMinor !== undefined) json.netMinor = totals.netMinor.toString();
  return json;
}

/** One of our card records that counts in a category: the ledger transfer it made, and its amount. */
export interface CategoryRecord {
  category: TotalsCategory;
  transferKey: string;
  amountMinor: bigint;
}

/**
 * Our records of one settlement date in one currency, as the card channel reads them from its
 * own store (cards/ owns the card tables and hands this reader to the comparison).
 */
export type SettledRecordsReader = (
  db: Queryable, tenantId: string, settlementDate: string, currency: string,
) => Promise<CategoryRecord[]>;

export function totalsOf(records: readonly CategoryRecord[]): SettlementTotals {
  const totals = Object.fromEntries(totalsCategories.map((c) => [c, { count: 0, amountMinor: 0n }])) as Record<TotalsCategory, CategoryTotal>;
  for (const record of records) {
    totals[record.category].count++;
    totals[record.category].amountMinor += record.amountMinor;
  }
  return totals;
}

/**
 * Field 15 is MMDD without a year: the year is the one that puts the date nearest to the day the
 * message arrived (a settlement date is at most days away from it, never half a year).
 */
export function settlementDateOf(mmdd: string, today: Date): string | undefined {
  if (!/^\d{4}$/.test(mmdd)) return undefined;
  const month = Number(mmdd.slice(0, 2));
  const day = Number(mmdd.slice(2));
  const year = today.getUTCFullYear();
  const candidates = [year - 1, year, year + 1]
    .map((y) => new Date(Date.UTC(y, month - 1, day)))
    .filter((d) => d.getUTCMonth() === month - 1 && d.getUTCDate() === day);
  candidates.sort((a, b) => Math.abs(a.getTime() - today.getTime()) - Math.abs(b.getTime() - today.getTime()));
  return candidates[0]?.toISOString().slice(0, 10);
}
