import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { identityCreditorOf, identityFingerprintOf } from "../../normalize/cross-channel-keys.ts";
import type { Candidate, Decided, RecordContext } from "../decision.ts";
import { selectIdentities } from "../store/identities.ts";

/** What two arrivals of one identity compare: amount, currency and the creditor's ledger account (else its unresolved alias). */
export function identityFingerprint(candidate: Candidate, counterparty?: string): string {
  const { record, rule } = candidate;
  const alias = rule.counterparty ? record.attributes[rule.counterparty] : undefined;
  const creditor = identityCreditorOf(record, counterparty) ?? `unresolved:${alias ?? ""}`;
  return identityFingerprintOf(record, creditor);
}

/**
 * Cross-channel key rules (protocols/identity/cross-channel-keys.json; docs/decisions/0032): a new
 * record carrying a payment identity claimed it with its key (claim-keys); the primary key of
 * record_identity arbitrates between channels. A record of another channel whose identity was claimed first is the same
 * payment when amount, currency and creditor agree and the first was applied: a duplicate, linked
 * to the first and never posted again. Otherwise it is a conflict, for a person (or the caller).
 * Records of the first one's own channel pass: their channel's natural keys decide between them.
 * `fresh` are the new records still undecided; `identitiesClaimed` those that claimed their
 * identity first.
 */
export async function relateIdentities(
  tx: Queryable, context: RecordContext, fresh: readonly Candidate[],
  identitiesClaimed: ReadonlySet<Candidate>, counterparties: ReadonlyMap<Candidate, string>,
): Promise<Decided> {
  // New records that carry an identity someone else claimed first (their claim went with their key's).
  const others = fresh.flatMap((candidate) => {
    const identityKey = candidate.identityKey;
    const claimedFirst = identitiesClaimed.has(candidate);
    const posts = candidate.rule.action === "post";
    return identityKey !== undefined && posts && !claimedFirst ? [{ candidate, identityKey }] : [];
  });
  const decided: Decided = new Map();
  if (others.length === 0) return decided;
  const firsts = await selectIdentities(tx, context.tenantId, others.map((o) => o.identityKey));
  for (const { candidate, identityKey } of others) {
    const first = firsts.get(identityKey);
    assert(first, `payment identity ${identityKey} exists after its claim conflicted`);
    const { record } = candidate;
    if (first.channel === record.channel || first.naturalKey === record.naturalKey) continue;
    const originalRef = first.transferKey ?? first.naturalKey;
    const arrived = `${first.naturalKey} (arrived by ${first.channel}: ${first.position})`;
    const fingerprint = identityFingerprint(candidate, counterparties.get(candidate));
    if (first.fingerprint === fingerprint && first.state === "applied") {
      decided.set(candidate, {
        kind: "linked", code: "RECORD_SAME_PAYMENT", originalRef, legOf: first.naturalKey,
        detail: `the same payment as ${arrived}: recorded and linked, not posted again`,
      });
      continue;
    }
    const why = first.state === "applied" ? "with another amount, currency or creditor" : `which was not applied (${first.state})`;
    decided.set(candidate, {
      kind: "conflict", code: "RECORD_IDENTITY_CONFLICT",
      detail: `${identityKey} already names ${arrived} ${why}`,
      originalRef, review: { matchedRef: first.naturalKey },
    });
  }
  return decided;
}
