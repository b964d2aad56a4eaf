import type { Queryable } from "../../db/pool.ts";
import { transferKeyOf } from "../../normalize/posting-rules.ts";
import { describePayment, relateByUetr, uetrRules, type PaymentContent } from "../../normalize/uetr-rules.ts";
import type { Candidate, Decided, RecordContext } from "../decision.ts";
import { selectAppliedByUetr, type UetrRow } from "../store/keys.ts";

function uetrOf(candidate: Candidate): string | undefined {
  const first = candidate.item.linkIds[0];
  return first?.startsWith("uetr:") ? first : undefined;
}

const bigintOrUndefined = (text: string | null | undefined): bigint | undefined =>
  text === null || text === undefined ? undefined : BigInt(text);

function contentOfCandidate(candidate: Candidate): PaymentContent {
  const record = candidate.record;
  const attributes = record.attributes;
  return {
    naturalKey: record.naturalKey, endToEndId: attributes.endToEndId,
    amountMinor: record.amount, currency: record.currency,
    instructedAmountMinor: bigintOrUndefined(attributes.instructedAmountMinor),
    instructedCurrency: attributes.instructedCurrency,
    chargesMinor: bigintOrUndefined(attributes.chargesMinor),
  };
}

function contentOfRow(row: UetrRow): PaymentContent {
  return {
    naturalKey: row.natural_key,
    endToEndId: row.link_id2?.startsWith("e2e:") ? row.link_id2.slice(4) : undefined,
    amountMinor: BigInt(row.amount_minor), currency: row.currency,
    instructedAmountMinor: bigintOrUndefined(row.instructed_amount_minor),
    instructedCurrency: row.instructed_currency ?? undefined,
    chargesMinor: bigintOrUndefined(row.charges_minor),
  };
}

/**
 * UETR rules (protocols/iso20022/uetr-rules.json): a new record that shares its UETR with a record
 * applied before under another key (other agents) is either a later leg of the same payment, which
 * is recorded and linked to the first leg but not posted again, or a different payment reusing the
 * UETR, which is held as a suspect with a finding naming both. Earlier records of this chunk count.
 * `undecided` are the new records still undecided; `fresh` all the new records of the batch.
 */
export async function relatePaymentLegs(
  tx: Queryable, context: RecordContext, undecided: readonly Candidate[],
  fresh: ReadonlySet<Candidate>,
): Promise<Decided> {
  const withUetr = undecided.flatMap((candidate) => {
    const uetr = uetrOf(candidate);
    const hasLegs = uetrRules.kinds.includes(candidate.record.kind);
    return hasLegs && uetr !== undefined ? [{ candidate, uetr }] : [];
  });
  const decided: Decided = new Map();
  if (withUetr.length === 0) return decided;
  const freshKeys = [...fresh].map((d) => d.record.naturalKey);
  const uetrs = withUetr.map((w) => w.uetr);
  const rows = await selectAppliedByUetr(tx, context.tenantId, uetrs, uetrRules.kinds, freshKeys);
  const firstByUetr = new Map<string, { content: PaymentContent; ref: string }>();
  for (const row of rows) {
    if (!firstByUetr.has(row.link_id1)) firstByUetr.set(row.link_id1, { content: contentOfRow(row), ref: row.transfer_key ?? row.natural_key });
  }
  for (const { candidate, uetr } of withUetr) {
    const content = contentOfCandidate(candidate);
    const first = firstByUetr.get(uetr);
    if (!first) {
      firstByUetr.set(uetr, { content, ref: transferKeyOf(content.naturalKey, candidate.rule) });
      continue;
    }
    const relation = relateByUetr(first.content, content);
    const originalRef = first.ref;
    const firstPayment = describePayment(first.content);
    if (relation.kind === "leg") {
      decided.set(candidate, {
        kind: "linked", code: "RECORD_PAYMENT_LEG_LINKED", originalRef,
        legOf: first.content.naturalKey,
        detail: `a later leg of ${firstPayment}: recorded and linked, not posted again`
          + (content.amountMinor === first.content.amountMinor ? ""
            : `; this leg settles ${content.amountMinor} minor units, charges `
              + `${content.chargesMinor ?? 0n} (docs/decisions/0108)`),
      });
    } else {
      const differing = relation.differing.join(", ");
      decided.set(candidate, {
        kind: "suspect", code: "RECORD_UETR_REUSED", originalRef,
        review: { matchedRef: first.content.naturalKey },
        detail: `${uetr.slice(5)} already names ${firstPayment}; `
          + `this record ${describePayment(content)} differs in ${differing}`,
      });
    }
  }
  return decided;
}
