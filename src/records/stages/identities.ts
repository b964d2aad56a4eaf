import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { identityCreditorOf, identityFingerprintOf } from "../../normalize/cross-channel-keys.ts";
import { decide, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { selectIdentities } from "../store/identities.ts";

/** What two arrivals of one identity compare: amount, currency and the creditor's ledger account (else its unresolved alias). */
export function identityFingerprint(decision: Candidate): string {
  const alias = decision.rule.counterparty ? decision.record.attributes[decision.rule.counterparty] : undefined;
  const creditor = identityCreditorOf(decision.record, decision.counterparty) ?? `unresolved:${alias ?? ""}`;
  return identityFingerprintOf(decision.record, creditor);
}

/**
 * Cross-channel key rules (protocols/identity/cross-channel-keys.json; docs/decisions/0032): a new
 * record carrying a payment identity claimed it with its key (claim-keys); the primary key of
 * record_identity arbitrates between channels. A record of another channel whose identity was claimed first is the same
 * payment when amount, currency and creditor agree and the first was applied: a duplicate, linked
 * to the first and never posted again. Otherwise it is a conflict, for a person (or the caller).
 * Records of the first one's own channel pass: their channel's natural keys decide between them.
 */
export async function relateIdentities(tx: Queryable, context: RecordContext, decisions: readonly Decision[], fresh: Set<Candidate>): Promise<void> {
  // New records that carry an identity someone else claimed first (their claim went with their key's).
  const others = undecided(decisions).filter((d) => fresh.has(d) && d.identityKey !== undefined && d.rule.action === "post" && d.identityClaimed !== true);
  if (others.length === 0) return;
  const firsts = await selectIdentities(tx, context.tenantId, others.map((d) => d.identityKey as string));
  for (const decision of others) {
    const first = firsts.get(decision.identityKey as string);
    assert(first, `payment identity ${decision.identityKey} exists after its claim conflicted`);
    if (first.channel === decision.record.channel || first.naturalKey === decision.record.naturalKey) continue;
    decision.originalRef = first.transferKey ?? first.naturalKey;
    const arrived = `${first.naturalKey} (arrived by ${first.channel}: ${first.position})`;
    if (first.fingerprint === identityFingerprint(decision) && first.state === "applied") {
      decide(decision, "duplicate", "RECORD_SAME_PAYMENT", `the same payment as ${arrived}: recorded and linked, not posted again`);
      decision.legOf = first.naturalKey;
      continue;
    }
    const why = first.state === "applied" ? "with another amount, currency or creditor" : `which was not applied (${first.state})`;
    decide(decision, "conflict", "RECORD_IDENTITY_CONFLICT", `${decision.identityKey} already names ${arrived} ${why}`);
    decision.review = { reason: "conflict", matchedRef: first.naturalKey };
  }
}
