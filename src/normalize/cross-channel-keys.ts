import { createHash } from "node:crypto";
import rulesJson from "../../protocols/identity/cross-channel-keys.json" with { type: "json" };
import { assert } from "../assert.ts";
import { channelNamed, type CanonicalRecord, type Channel } from "./canonical-record.ts";

/**
 * Cross-channel key rules (protocols/identity/cross-channel-keys.json): which records carry a
 * payment identity that another channel may carry too, and what makes two of them one payment.
 * Pure: the record core claims the identities and compares the fingerprints.
 */
export interface IdentityRule {
  channel: Channel;
  kinds: readonly string[];
  identity: string;                                        // the attribute holding the end-to-end reference
  creditor: { attribute: string } | { counterparty: true };
}

function loadRules(): IdentityRule[] {
  return rulesJson.identities.map((raw, index) => {
    const where = `cross-channel rule ${index}`;
    const channel = channelNamed(raw.channel);
    assert(channel !== undefined, `${where}: channel ${raw.channel}`);
    assert(Array.isArray(raw.kinds) && raw.kinds.length > 0, `${where} names kinds`);
    assert(typeof raw.identity === "string" && raw.identity.length > 0, `${where} names the identity attribute`);
    const creditor = raw.creditor as { attribute?: string; counterparty?: boolean };
    assert((typeof creditor.attribute === "string") !== (creditor.counterparty === true), `${where}: the creditor is an attribute or the counterparty`);
    return {
      channel, kinds: raw.kinds, identity: raw.identity,
      creditor: typeof creditor.attribute === "string" ? { attribute: creditor.attribute } : { counterparty: true },
    };
  });
}

export const identityRules: readonly IdentityRule[] = loadRules();
const notKeys = new Set(rulesJson.notKeys.map((k) => k.toUpperCase()));

export function identityRuleFor(record: Pick<CanonicalRecord, "channel" | "kind">): IdentityRule | undefined {
  return identityRules.find((rule) => rule.channel === record.channel && rule.kinds.includes(record.kind));
}

/** The payment identity of a record, or undefined when its rules give none (or the reference is a placeholder). */
export function identityKeyOf(record: Pick<CanonicalRecord, "channel" | "kind" | "attributes">): string | undefined {
  const rule = identityRuleFor(record);
  const reference = rule === undefined ? undefined : record.attributes[rule.identity]?.trim();
  if (reference === undefined || reference === "" || notKeys.has(reference.toUpperCase())) return undefined;
  return `e2e:${reference}`;
}

/** What two arrivals of one identity must agree on to be one payment: amount, currency, the creditor's ledger account. */
export function identityFingerprintOf(record: Pick<CanonicalRecord, "amount" | "currency">, creditorAccount: string): string {
  return createHash("sha256").update([record.amount.toString(), record.currency, creditorAccount].join("\u001f")).digest("hex");
}

/** The creditor's ledger account as the rule says to read it; undefined when the record does not give it. */
export function identityCreditorOf(record: Pick<CanonicalRecord, "channel" | "kind" | "attributes">, counterparty: string | undefined): string | undefined {
  const rule = identityRuleFor(record);
  if (rule === undefined) return undefined;
  return "attribute" in rule.creditor ? record.attributes[rule.creditor.attribute] : counterparty;
}
