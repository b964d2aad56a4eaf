import type { Queryable } from "../db/pool.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import {
  asOfDateOf, settlementTotals, type SettlementAccountTotals, type SettlementBucket,
} from "../ledger/index.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import { findPartner, partnerAccountsOf, type Partner } from "./partners.ts";

/**
 * Expected settlement totals of a partner on a settlement date, from our side (issue 30 item 5):
 * per currency, the credits, debits, returns and corrections our ledger settles with the partner
 * that day (transfers by their settlement date, docs/decisions/0101), ready to set beside the
 * partner's and the bank's figures.
 */
export interface PartnerSettlementTotals {
  partner: Partner;
  settlementDate: string;
  currencies: SettlementAccountTotals[];
}

export async function partnerSettlementTotals(
  db: Queryable, tenantId: string, partnerIdOrName: string, date: unknown,
): Promise<Result<PartnerSettlementTotals, Finding>> {
  const settlementDate = asOfDateOf(date, { field: "date" });
  if (!settlementDate.ok) return settlementDate;
  const partner = await findPartner(db, tenantId, partnerIdOrName);
  if (partner === undefined) {
    const message = `no partner ${partnerIdOrName}`;
    return fail(finding("PARTNER_NOT_FOUND", message, { field: "partner" }));
  }
  const prefix = `partner.${partner.name}.settlement.`;
  const read = await settlementTotals(db, tenantId, prefix, settlementDate.value);
  // The prefix of "a" also starts "a.settlement.settlement.USD", another partner's account:
  // only the partner's own account of each currency counts.
  const currencies = read.filter((totals) =>
    totals.accountId === partnerAccountsOf(partner, totals.currency).settlement);
  return ok({ partner, settlementDate: settlementDate.value, currencies });
}

function bucketDocument(bucket: SettlementBucket, currency: string): Record<string, unknown> {
  return {
    count: bucket.count,
    to_us: minorToDecimal(bucket.toUsMinor, currency),
    to_partner: minorToDecimal(bucket.toPartnerMinor, currency),
  };
}

/** As published (HTTP and `clearline settlement totals --json`): amounts as decimal strings. */
export function settlementTotalsDocument(totals: PartnerSettlementTotals): Record<string, unknown> {
  return {
    partner: totals.partner.name,
    partner_id: totals.partner.partnerId,
    settlement_date: totals.settlementDate,
    currencies: totals.currencies.map((c) => ({
      currency: c.currency,
      account: c.accountId,
      credits: bucketDocument(c.buckets.credits, c.currency),
      debits: bucketDocument(c.buckets.debits, c.currency),
      returns: bucketDocument(c.buckets.returns, c.currency),
      corrections: bucketDocument(c.buckets.corrections, c.currency),
      net_to_us: minorToDecimal(c.netToUsMinor, c.currency),
    })),
  };
}
