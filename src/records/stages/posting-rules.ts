import { identityKeyOf } from "../../normalize/cross-channel-keys.ts";
import type { ReceivedRecord } from "../../normalize/received-record.ts";
import { postingRuleFor } from "../../normalize/posting-rules.ts";
import type { Candidate, Decision } from "../decision.ts";

/**
 * The first stage: a record the reader rejected keeps its finding; a valid one with a posting rule
 * is a candidate for the other stages (with the payment identity it carries, if any); a valid one
 * without a rule is rejected, never guessed.
 */
export function candidateOf(item: ReceivedRecord): Candidate | Decision {
  const record = item.record;
  if (!record) {
    const error = item.rejection;
    const field = error?.position.field;
    return { item, outcome: {
      kind: "rejected", code: error?.code ?? "RECORD_NO_POSTING_RULE",
      detail: error?.message ?? "rejected",
      ...(field ? { field } : {}),
    } };
  }
  const rule = postingRuleFor(record);
  if (!rule) {
    const detail = `no posting rule for ${record.channel} ${record.kind}`;
    return { item, record, outcome: { kind: "rejected", code: "RECORD_NO_POSTING_RULE", detail } };
  }
  const identityKey = identityKeyOf(record);
  return identityKey === undefined ? { item, record, rule } : { item, record, rule, identityKey };
}

export function isCandidate(entry: Candidate | Decision): entry is Candidate {
  return !("outcome" in entry);
}
