import { createHash } from "node:crypto";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { findAccount } from "../ledger/index.ts";
import { gatewayAccounts } from "../normalize/from-iso8583.ts";
import { outcomeOrder, type MatchResult, type MatchOutcome } from "./matching.ts";
import { refreshReconMetrics } from "./recon-metrics.ts";
import { storeRun, type RunSummary } from "./runs.ts";
import {
  categorySign, mismatchedCategories, netOf, totalsAgree, totalsCategories, totalsJson, totalsOf,
  type CategoryRecord, type SettledRecordsReader, type SettlementTotals, type TotalsCategory,
} from "./scheme-totals.ts";

/**
 * An ISO 8583 reconciliation message (0500 request, 0520 advice) compared with our own totals
 * of the same settlement date (docs/decisions/0027-scheme-totals-reconciliation.md). Totals that
 * agree are answered "in balance"; totals that do not start a detail comparison, stored as a
 * reconciliation run of the scheme clearing account for that date (one result per category,
 * naming every transfer of ours that makes up our total), and are answered "out of balance".
 * The exchange is recorded once per message: a repeat is answered from the record.
 */
export interface SchemeTotalsMessage {
  tenantId: string;
  naturalKey: string;
  mti: string;
  settlementDate: string;   // YYYY-MM-DD
  currency: string;         // ISO 4217 alpha
  theirs: SettlementTotals;
  connection: string;
}

export type SettlementCode = "1" | "2";   // field 66: 1 in balance, 2 out of balance

export interface SchemeTotalsResponse {
  mti: string;
  fields: Record<string, unknown>;
}

export interface SchemeTotalsOutcome {
  settlementCode: SettlementCode;
  runId: string | null;
  response: SchemeTotalsResponse;
  repeated: boolean;        // answered from the record of an earlier copy of this message
}

export const schemeTotalsRulesVersion = "iso8583-totals-1";

/**
 * Compares `message` with our records of its date and currency, which `readOurs` reads (the card
 * channel's store is cards/'s), and answers with `respond`.
 */
export async function reconcileSchemeTotals(
  pool: Pool, message: SchemeTotalsMessage, readOurs: SettledRecordsReader,
  respond: (code: SettlementCode) => SchemeTotalsResponse,
): Promise<SchemeTotalsOutcome> {
  const outcome = await withTransaction(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [message.tenantId, message.naturalKey]);
    const seen = await tx.query<{ settlement_code: SettlementCode; run_id: string | null; response_mti: string; response_fields: Record<string, unknown> }>(
      "SELECT settlement_code, run_id, response_mti, response_fields FROM iso8583_recon_totals WHERE tenant_id = $1 AND natural_key = $2",
      [message.tenantId, message.naturalKey],
    );
    const earlier = seen.rows[0];
    if (earlier !== undefined) {
      return { settlementCode: earlier.settlement_code, runId: earlier.run_id, response: { mti: earlier.response_mti, fields: earlier.response_fields }, repeated: true };
    }
    const records = await readOurs(tx, message.tenantId, message.settlementDate, message.currency);
    const ours = totalsOf(records);
    const settlementCode: SettlementCode = totalsAgree(message.theirs, ours) ? "1" : "2";
    const runId = settlementCode === "2" ? await storeDetailRun(tx, message, records) : null;
    const response = respond(settlementCode);
    await tx.query(
      `INSERT INTO iso8583_recon_totals (tenant_id, natural_key, mti, settlement_date, currency, theirs, ours, settlement_code, run_id, response_mti, response_fields, connection)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [message.tenantId, message.naturalKey, message.mti, message.settlementDate, message.currency, JSON.stringify(totalsJson(message.theirs)),
        JSON.stringify(totalsJson(ours)), settlementCode, runId, response.mti, JSON.stringify(response.fields), message.connection],
    );
    return { settlementCode, runId, response, repeated: false };
  });
  if (outcome.runId !== null && !outcome.repeated) await refreshReconMetrics(pool, message.tenantId);
  return outcome;
}

/**
 * Their side of one category: one item per settlement date, currency, category and what they
 * claim for it, so a later message with the same claim finds the same difference, and a new
 * claim is a new difference (its delta is the new one) while the old one is resolved.
 */
function itemKeyOf(message: SchemeTotalsMessage, part: TotalsCategory | "net"): string {
  const claim = part === "net" ? `${message.theirs.netMinor ?? 0n}` : `${message.theirs[part].count}x${message.theirs[part].amountMinor}`;
  return `iso8583-totals:${message.settlementDate}:${message.currency}:${part}:${claim}`;
}

/** The reason of a category that does not agree: nothing of ours, nothing of theirs, or counts/amounts apart. */
function reasonOf(theirCount: number, ourCount: number): MatchOutcome {
  if (ourCount === 0) return "theirs_only";
  if (theirCount === 0) return "ours_only";
  return "amount_differs";
}

/** The detail comparison: one result per category (signed as field 97: credits positive), the net when only it disagrees. */
export function detailResults(message: SchemeTotalsMessage, records: readonly CategoryRecord[]): MatchResult[] {
  const ours = totalsOf(records);
  const mismatched = new Set(mismatchedCategories(message.theirs, ours));
  const results: MatchResult[] = totalsCategories
    .filter((category) => message.theirs[category].count > 0 || ours[category].count > 0 || mismatched.has(category))
    .map((category) => {
      const sign = categorySign[category];
      const result: MatchResult = {
        outcome: mismatched.has(category) ? reasonOf(message.theirs[category].count, ours[category].count) : "matched",
        itemKeys: [itemKeyOf(message, category)],
        transferKeys: records.filter((r) => r.category === category).map((r) => r.transferKey),
        theirsMinor: sign * message.theirs[category].amountMinor,
        oursMinor: sign * ours[category].amountMinor,
      };
      result.rule = "scheme-totals";
      return result;
    });
  if (mismatched.size === 0 && message.theirs.netMinor !== undefined && message.theirs.netMinor !== netOf(ours)) {
    results.push({ outcome: "amount_differs", rule: "scheme-totals", itemKeys: [itemKeyOf(message, "net")], transferKeys: [], theirsMinor: message.theirs.netMinor, oursMinor: netOf(ours) });
  }
  // Listed as every run is: what they have and we do not first.
  return results.sort((a, b) => outcomeOrder.indexOf(a.outcome) - outcomeOrder.indexOf(b.outcome));
}

async function storeDetailRun(tx: Tx, message: SchemeTotalsMessage, records: readonly CategoryRecord[]): Promise<string | null> {
  const accountId = gatewayAccounts.scheme(message.currency);
  // No clearing account in this currency: the tenant never settled a card payment in it, so
  // there is no account to hold the run; the recorded totals say what the scheme claimed.
  if ((await findAccount(tx, message.tenantId, accountId)) === undefined) return null;
  const results = detailResults(message, records);
  const hash = createHash("sha256");
  for (const part of [message.tenantId, accountId, message.settlementDate, schemeTotalsRulesVersion, JSON.stringify(totalsJson(message.theirs)), ...records.map((r) => `${r.category}:${r.transferKey}=${r.amountMinor}`)]) hash.update(part).update("\u0000");
  const summary: RunSummary = {
    runId: `rrn_${hash.digest("hex").slice(0, 24)}`, accountId, from: message.settlementDate, to: message.settlementDate, matched: 0, dryRun: false, alreadyRun: false,
    differences: { theirs_only: 0, ours_only: 0, amount_differs: 0, date_outside_window: 0, duplicate_on_their_side: 0, pending: 0, foreign_currency: 0 },
  };
  for (const result of results) {
    if (result.outcome === "matched") summary.matched++;
    else summary.differences[result.outcome]++;
  }
  const stored = await storeRun(tx, message.tenantId, summary, results, message.currency, schemeTotalsRulesVersion);
  return stored.runId;
}
