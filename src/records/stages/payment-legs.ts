import type { Queryable } from "../../db/pool.ts";
import { transferKeyOf } from "../../normalize/posting-rules.ts";
import { describePayment, relateByUetr, uetrRules, type PaymentContent } from "../../normalize/uetr-rules.ts";
import { decide, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { selectAppliedByUetr, type UetrRow } from "../store/keys.ts";

function uetrOf(decision: Candidate): string | undefined {
  const first = decision.item.linkIds[0];
  return first?.startsWith("uetr:") ? first : undefined;
}

function contentOfDecision(decision: Candidate): PaymentContent {
  const record = decision.record;
  return { naturalKey: record.naturalKey, endToEndId: record.attributes.endToEndId, amountMinor: record.amount, currency: record.currency };
}

function contentOfRow(row: UetrRow): PaymentContent {
  return { naturalKey: row.natural_key, endToEndId: row.link_id2?.startsWith("e2e:") ? row.link_id2.slice(4) : undefined, amountMinor: BigInt(row.amount_minor), currency: row.currency };
}

/**
 * UETR rules (protocols/iso20022/uetr-rules.json): a new record that shares its UETR with a record
 * applied before under another key (other agents) is either a later leg of the same payment, which
 * is recorded and linked to the first leg but not posted again, or a different payment reusing the
 * UETR, which is held as a suspect with a finding naming both. Earlier records of this chunk count.
 */
export async function relatePaymentLegs(tx: Queryable, context: RecordContext, decisions: readonly Decision[], fresh: Set<Candidate>): Promise<void> {
  const candidates = undecided(decisions).filter((d) => fresh.has(d) && uetrRules.kinds.includes(d.record.kind) && uetrOf(d) !== undefined);
  if (candidates.length === 0) return;
  const rows = await selectAppliedByUetr(tx, context.tenantId, candidates.map((d) => uetrOf(d) as string), uetrRules.kinds, [...fresh].map((d) => d.record.naturalKey));
  const firstByUetr = new Map<string, { content: PaymentContent; ref: string }>();
  for (const row of rows) {
    if (!firstByUetr.has(row.link_id1)) firstByUetr.set(row.link_id1, { content: contentOfRow(row), ref: row.transfer_key ?? row.natural_key });
  }
  for (const decision of candidates) {
    const uetr = uetrOf(decision) as string;
    const content = contentOfDecision(decision);
    const first = firstByUetr.get(uetr);
    if (!first) {
      firstByUetr.set(uetr, { content, ref: transferKeyOf(content.naturalKey, decision.rule) });
      continue;
    }
    const relation = relateByUetr(first.content, content);
    decision.originalRef = first.ref;
    if (relation.kind === "leg") {
      decide(decision, "applied", "INGEST_PAYMENT_LEG_LINKED", `a later leg of ${describePayment(first.content)}: recorded and linked, not posted again`);
      decision.legOf = first.content.naturalKey;
    } else {
      decide(decision, "suspect", "INGEST_UETR_REUSED", `${uetr.slice(5)} already names ${describePayment(first.content)}; this record ${describePayment(content)} differs in ${relation.differing.join(", ")}`);
      decision.review = { reason: "suspect", matchedRef: first.content.naturalKey };
    }
  }
}
