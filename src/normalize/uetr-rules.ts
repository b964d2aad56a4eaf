import uetrRulesJson from "../../protocols/iso20022/uetr-rules.json" with { type: "json" };
import { assert } from "../assert.ts";

/**
 * UETR rules as data (protocols/iso20022/uetr-rules.json): when two records of the listed kinds
 * carry one UETR under different natural keys (other instructing/instructed agents), they are
 * either legs of one payment (every samePayment field equal) or a UETR reused for another payment.
 * Pure: the ingest chunk finds the records that share a UETR and asks this module what they are.
 */
export type PaymentField = "endToEndId" | "amountMinor" | "currency";

/** What a finding names as different: a compared field, or the amounts of 0108. */
export type DifferingField = PaymentField | "instructedAmount" | "charges";

export interface UetrRules {
  kinds: readonly string[];
  samePayment: readonly PaymentField[];
  posted: "first-seen";
  /**
   * docs/decisions/0108: legs that both state an instructed amount in the settlement currency
   * compare it instead of their settlement amounts, each leg's settlement amount plus charges
   * making its instructed amount.
   */
  instructedAmountWithCharges: boolean;
}

/** What one record with a UETR says about its payment, for comparison. */
export interface PaymentContent {
  naturalKey: string;
  endToEndId: string | undefined;
  amountMinor: bigint;
  currency: string;
  instructedAmountMinor?: bigint | undefined;   // InstdAmt, in instructedCurrency
  instructedCurrency?: string | undefined;
  chargesMinor?: bigint | undefined;            // Σ ChrgsInf/Amt; absent: not summable
}

const paymentFields: readonly PaymentField[] = ["endToEndId", "amountMinor", "currency"];

export function loadUetrRules(raw: {
  kinds: unknown; samePayment: unknown; posted: unknown; instructedAmountWithCharges?: unknown;
}): UetrRules {
  assert(Array.isArray(raw.kinds) && raw.kinds.length > 0 && raw.kinds.every((kind) => typeof kind === "string"), "uetr rules name the kinds they apply to");
  assert(Array.isArray(raw.samePayment) && raw.samePayment.length > 0 && raw.samePayment.every((field) => paymentFields.includes(field as PaymentField)),
    `uetr rules compare ${paymentFields.join(", ")}`);
  assert(raw.posted === "first-seen", "the posted leg is the first seen");
  const withCharges = raw.instructedAmountWithCharges ?? false;
  assert(typeof withCharges === "boolean", "instructedAmountWithCharges is true or false");
  return {
    kinds: raw.kinds as string[], samePayment: raw.samePayment as PaymentField[],
    posted: "first-seen", instructedAmountWithCharges: withCharges,
  };
}

export const uetrRules: UetrRules = loadUetrRules(uetrRulesJson);

export type UetrRelation = { kind: "leg" } | { kind: "reused"; differing: DifferingField[] };

/** The leg states an instructed amount in its settlement currency (0108). */
function instructedInSettlementCurrency(content: PaymentContent): boolean {
  return content.instructedAmountMinor !== undefined
    && content.instructedCurrency === content.currency;
}

/** Its settlement amount plus the charges its agents deducted make its instructed amount. */
function addsUp(content: PaymentContent): boolean {
  return content.chargesMinor !== undefined
    && content.amountMinor + content.chargesMinor === content.instructedAmountMinor;
}

/**
 * Two records under one UETR: legs of one payment, or the UETR reused for another payment
 * (naming the fields that differ). When both state an instructed amount in the settlement
 * currency, the settlement amounts may differ by the charges (docs/decisions/0108).
 */
export function relateByUetr(first: PaymentContent, later: PaymentContent, rules: UetrRules = uetrRules): UetrRelation {
  const byInstructed = rules.instructedAmountWithCharges
    && instructedInSettlementCurrency(first) && instructedInSettlementCurrency(later);
  const compared = byInstructed
    ? rules.samePayment.filter((field) => field !== "amountMinor") : rules.samePayment;
  const differing: DifferingField[] = compared.filter((field) => first[field] !== later[field]);
  if (byInstructed) {
    if (first.instructedAmountMinor !== later.instructedAmountMinor) {
      differing.push("instructedAmount");
    }
    if (!addsUp(first) || !addsUp(later)) differing.push("charges");
  }
  return differing.length === 0 ? { kind: "leg" } : { kind: "reused", differing };
}

/** "E2E-1, 2500.00 EUR" as people read a payment in a finding. */
export function describePayment(content: PaymentContent): string {
  const instructed = content.instructedAmountMinor === undefined ? ""
    : `, instructed ${content.instructedAmountMinor} ${content.instructedCurrency ?? ""}, charges `
      + `${content.chargesMinor === undefined ? "not summable" : String(content.chargesMinor)}`;
  return `${content.naturalKey} (EndToEndId ${content.endToEndId ?? "none"}, `
    + `${content.amountMinor} minor units ${content.currency}${instructed})`;
}
