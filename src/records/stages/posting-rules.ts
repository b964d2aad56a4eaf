import { postingRuleFor } from "../../normalize/posting-rules.ts";
import type { IngestRecord } from "../../normalize/ingest-record.ts";
import type { Decision } from "../decision.ts";

/** The first stage: a record the reader rejected keeps its finding; a valid one gets its posting rule, or is rejected without one. */
export function ruleDecision(item: IngestRecord): Decision {
  if (!item.record) {
    const error = item.rejection;
    const decision: Decision = { item, outcome: "rejected", code: error?.code ?? "INGEST_NO_POSTING_RULE", detail: error?.message ?? "rejected" };
    if (error?.position.field) decision.field = error.position.field;
    return decision;
  }
  const rule = postingRuleFor(item.record);
  if (!rule) return { item, record: item.record, outcome: "rejected", code: "INGEST_NO_POSTING_RULE", detail: `no posting rule for ${item.record.channel} ${item.record.kind}` };
  return { item, record: item.record, rule };
}
