import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { categoryOfKind } from "./statement.ts";

/**
 * What our books expect to settle with a partner on a date (issue 30 item 5):
 * the entries on settlement accounts whose transfer settles that day (0101), by what they are.
 * Signs are our side's: money `toUs` debits the settlement account (an asset: the partner, or
 * the clearing system, owes it to us), money `toPartner` credits it.
 */
export type SettlementBucketName = "credits" | "debits" | "returns" | "corrections";

export interface SettlementBucket {
  count: number;            // distinct transfers with an entry in the bucket
  toUsMinor: bigint;        // their debits of the settlement account
  toPartnerMinor: bigint;   // their credits of it
}

export interface SettlementAccountTotals {
  accountId: string;
  currency: string;
  buckets: Record<SettlementBucketName, SettlementBucket>;
  netToUsMinor: bigint;     // every entry of the day: debits less credits of the account
}

/**
 * A posting that brings money in for our customers (a credit entry received) debits the
 * settlement account: a credit; one that takes money out (a debit entry) credits it: a debit.
 * Returns and corrections are kept apart whatever their direction, so the three a partner's
 * figures name (credits, debits, returns) can be compared one by one.
 */
function bucketOf(kind: string, direction: "D" | "C"): SettlementBucketName {
  const category = categoryOfKind(kind);
  if (category === "return") return "returns";
  if (category === "technical_correction" || category === "reconciliation_correction") {
    return "corrections";
  }
  return direction === "D" ? "credits" : "debits";
}

// The day's transfers by the index on their settlement date (migration 0040), then their
// entries on settlement accounts whose id starts with the prefix: one statement, one snapshot.
const SETTLEMENT_TOTALS_SQL = `
  SELECT e.account_id, e.currency, t.kind, e.direction,
         count(DISTINCT t.transfer_key)::int AS transfers,
         sum(e.amount_minor)::text AS amount_minor
    FROM transfer t
    JOIN ledger_entry e ON e.tenant_id = t.tenant_id AND e.transfer_key = t.transfer_key
    JOIN account a ON a.tenant_id = e.tenant_id AND a.account_id = e.account_id
   WHERE t.tenant_id = $1
     AND coalesce(t.settlement_date, t.value_date) = $2::date
     AND a.kind = 'settlement'
     AND starts_with(e.account_id, $3)
   GROUP BY e.account_id, e.currency, t.kind, e.direction
   ORDER BY e.account_id, t.kind, e.direction`;

interface TotalsRow {
  account_id: string; currency: string; kind: string; direction: "D" | "C";
  transfers: number; amount_minor: string;
}

const emptyBucket = (): SettlementBucket => ({ count: 0, toUsMinor: 0n, toPartnerMinor: 0n });

/**
 * Totals per settlement account (one a currency) whose id starts with `accountPrefix`, of the
 * transfers settling on `settlementDate`. A transfer with legs in two buckets' kinds is counted
 * in each; a kind is one bucket, so counts add up per bucket.
 */
export async function settlementTotals(
  db: Queryable, tenantId: string, accountPrefix: string, settlementDate: string,
): Promise<SettlementAccountTotals[]> {
  assert(/^\d{4}-\d{2}-\d{2}$/.test(settlementDate), `date ${settlementDate} is YYYY-MM-DD`);
  assert(accountPrefix.length > 0, "settlement totals name an account prefix");
  const { rows } = await db.query<TotalsRow>(
    { name: "clearline.ledger.settlement-totals", text: SETTLEMENT_TOTALS_SQL },
    [tenantId, settlementDate, accountPrefix]);
  const byAccount = new Map<string, SettlementAccountTotals>();
  for (const row of rows) {
    let totals = byAccount.get(row.account_id);
    if (totals === undefined) {
      totals = {
        accountId: row.account_id, currency: row.currency, netToUsMinor: 0n,
        buckets: {
          credits: emptyBucket(), debits: emptyBucket(),
          returns: emptyBucket(), corrections: emptyBucket(),
        },
      };
      byAccount.set(row.account_id, totals);
    }
    const bucket = totals.buckets[bucketOf(row.kind, row.direction)];
    const amountMinor = BigInt(row.amount_minor);
    bucket.count += row.transfers;
    if (row.direction === "D") bucket.toUsMinor += amountMinor;
    else bucket.toPartnerMinor += amountMinor;
    totals.netToUsMinor += row.direction === "D" ? amountMinor : -amountMinor;
  }
  return [...byAccount.values()];
}
