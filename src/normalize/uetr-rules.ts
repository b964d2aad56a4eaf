import uetrRulesJson from "../../protocols/iso20022/uetr-rules.json" with { type: "json" };
import { assert } from "../assert.ts";

/**
 * UETR rules as data (protocols/iso20022/uetr-rules.json): when two records of the listed kinds
 * carry one UETR under different natural keys (other instructing/instructed agents), they are
 * either legs of one payment (every samePayment field equal) or a UETR reused for another payment.
 * Pure: the ingest chunk finds the records that share a UETR and asks this module what they are.
 */
export type PaymentField = "endToEndId" | "amountMinor" | "currency";

export interface UetrRules {
  kinds: readonly string[];
  samePayment: readonly PaymentField[];
  posted: "first-seen";
}

/** What one record with a UETR says about its payment, for comparison. */
export interface PaymentContent {
  naturalKey: string;
  endToEndId: string | undefined;
  amountMinor: bigint;
  currency: string;
}

const paymentFields: readonly PaymentField[] = ["endToEndId", "amountMinor", "currency"];

export function loadUetrRules(raw: { kinds: unknown; samePayment: unknown; posted: unknown }): UetrRules {
  assert(Array.isArray(raw.kinds) && raw.kinds.length > 0 && raw.kinds.every((kind) => typeof kind === "string"), "uetr rules name the kinds they apply to");
  assert(Array.isArray(raw.samePayment) && raw.samePayment.length > 0 && raw.samePayment.every((field) => paymentFields.includes(field as PaymentField)),
    `uetr rules compare ${paymentFields.join(", ")}`);
  assert(raw.posted === "first-seen", "the posted leg is the first seen");
  return { kinds: raw.kinds as string[], samePayment: raw.samePayment as PaymentField[], posted: "first-seen" };
}

export const uetrRules: UetrRules = loadUetrRules(uetrRulesJson);

export type UetrRelation = { kind: "leg" } | { kind: "reused"; differing: PaymentField[] };

/** Two records under one UETR: legs of one payment, or the UETR reused for another payment (naming the fields that differ). */
export function relateByUetr(first: PaymentContent, later: PaymentContent, rules: UetrRules = uetrRules): UetrRelation {
  const differing = rules.samePayment.filter((field) => first[field] !== later[field]);
  return differing.length === 0 ? { kind: "leg" } : { kind: "reused", differing };
}

/** "E2E-1, 2500.00 EUR" as people read a payment in a finding. */
export function describePayment(content: PaymentContent): string {
  return `${content.naturalKey} (EndToEndId ${content.endToEndId ?? "none"}, ${content.amountMinor} minor units ${content.currency})`;
}
