import table from "../../../protocols/iso20022/status-reasons.json" with { type: "json" };
import { assert } from "../../assert.ts";
import type { Pacs002Input, TransactionStatus } from "./pacs002-writer.ts";

type LineStatus = Pick<TransactionStatus, "status" | "reasonCode" | "additionalInformation">;

const statuses = new Set(["ACSC", "ACCP", "RJCT"]);
const byOutcome = new Map<string, { status: TransactionStatus["status"]; additionalInformation?: string }>();
for (const [outcome, entry] of Object.entries(table.byOutcome)) {
  assert(statuses.has(entry.status), `status report: outcome ${outcome} maps to ACSC, ACCP or RJCT`);
  byOutcome.set(outcome, entry as { status: TransactionStatus["status"]; additionalInformation?: string });
}
const reasons = new Map<string, string>(Object.entries(table.reasonByCode));
for (const [code, reason] of reasons) assert(/^[A-Z0-9]{4}$/.test(reason), `status reason for ${code} is a 4-character ISO code`);

/** AddtlInf is Max105Text. */
const additionalInformationCharsMax = 105;

/**
 * How one record's ingestion outcome reads in a pacs.002 (protocols/iso20022/status-reasons.json):
 * its status, and for a rejection the ISO reason for its code (NARR with the message when unlisted).
 */
export function transactionStatusOf(outcome: string, code: string | null, detail: string | null): LineStatus {
  const entry = byOutcome.get(outcome);
  assert(entry !== undefined, `status report: outcome ${outcome} is in the table`);
  if (entry.status !== "RJCT") return entry.additionalInformation === undefined ? { status: entry.status } : { status: entry.status, additionalInformation: entry.additionalInformation };
  const reasonCode = (code === null ? undefined : reasons.get(code)) ?? table.reasonDefault;
  const information = [code, detail].filter((s) => s !== null && s !== "").join(": ").slice(0, additionalInformationCharsMax);
  return information === "" ? { status: "RJCT", reasonCode } : { status: "RJCT", reasonCode, additionalInformation: information };
}

/** ACCP when no transaction is rejected, RJCT when all are, PART otherwise. */
export function groupStatusOf(lines: readonly Pick<TransactionStatus, "status">[]): NonNullable<Pacs002Input["groupStatus"]> {
  const rejected = lines.filter((l) => l.status === "RJCT").length;
  if (rejected === 0) return "ACCP";
  return rejected === lines.length ? "RJCT" : "PART";
}

const outcomeByState = new Map<string, string>(Object.entries(table.byPaymentState).map(([state, entry]) => [state, entry.outcome]));
for (const [state, outcome] of outcomeByState) assert(byOutcome.has(outcome), `status report: payment state ${state} reads as outcome ${outcome}`);

/**
 * How a payment's recorded state answers a status request (pacs.028); undefined state: clearline
 * has no payment with the reference, a rejection with the table's reason.
 */
export function requestedStatusOf(payment: { state: string; code: string | null; detail: string | null } | undefined): LineStatus {
  if (payment === undefined) return { status: "RJCT", reasonCode: table.unknownReference.reasonCode, additionalInformation: table.unknownReference.additionalInformation };
  const outcome = outcomeByState.get(payment.state);
  assert(outcome !== undefined, `status request: payment state ${payment.state} is in the table`);
  return transactionStatusOf(outcome, payment.code, payment.detail);
}
