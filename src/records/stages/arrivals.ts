import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import { countDedupDecisions, recordDedupEvents, type DedupChannel, type DedupEvent } from "../../dedup/dedup-event.ts";
import { enqueueEvents } from "../../outbox/outbox-store.ts";
import type { Decision, FileArrival, RecordContext, RequestArrival } from "../decision.ts";
import { insertOutcomes, insertReviews } from "../store/arrivals.ts";
import { reviewIdOf, type ReviewRecord } from "../review-id.ts";

/**
 * What an arrival leaves behind, in the decisions' own transaction (every dedup leaves a record).
 * For a file: one outcome row per record, which IS the dedup record of a repeat, link or hold (its
 * key, time, file and position, reason and original: docs/decisions/0053), and a review item (with
 * its outbox event) per held record. For a request or message: a dedup_event row per repeat, link
 * or hold.
 */
export async function writeArrivals(tx: Tx, context: RecordContext, decisions: readonly Decision[]): Promise<void> {
  if (context.arrival.kind === "file") {
    await writeOutcomes(tx, context.tenantId, context.arrival, decisions);
    await writeReviews(tx, context.tenantId, context.arrival, decisions);
    countDedupDecisions(dedupsOf(decisions));
    return;
  }
  if (context.arrival.callerRecordsRepeats) return;
  await recordDedupEvents(tx, dedupEventsOf(context, context.arrival, decisions));
}

async function writeOutcomes(tx: Tx, tenantId: string, arrival: FileArrival, decisions: readonly Decision[]): Promise<void> {
  await insertOutcomes(tx, tenantId, arrival.fileId, decisions.map((d) => {
    assert(d.outcome !== undefined, `record ${d.item.index} has an outcome`);
    return {
      recordIndex: d.item.index, position: d.item.position, naturalKey: d.record?.naturalKey ?? null, outcome: d.outcome,
      code: d.code ?? null, field: d.field ?? null, detail: d.detail ?? null, kind: d.record?.kind ?? null,
      amountMinor: d.record?.amount ?? null, currency: d.record?.currency ?? null, originalRef: d.originalRef ?? null,
      transferKey: d.outcome === "applied" ? (d.transferKey ?? null) : null,
    };
  }));
}

/** Records of one file sharing a key (even twins equal in every field) are separate review items. */
function reviewIdFor(arrival: FileArrival, decision: Decision): string {
  const record = decision.record;
  assert(record, "a held record has a canonical record");
  return decision.review?.inFile ? reviewIdOf(`${record.naturalKey}#${arrival.fileId}:${decision.item.index}`, record.fingerprint) : reviewIdOf(record.naturalKey, record.fingerprint);
}

async function writeReviews(tx: Tx, tenantId: string, arrival: FileArrival, decisions: readonly Decision[]): Promise<void> {
  const held = decisions.filter((d) => d.review !== undefined && d.record !== undefined);
  if (held.length === 0) return;
  await insertReviews(tx, tenantId, arrival.fileId, arrival.partnerId, held.map((d) => {
    const record = d.record as NonNullable<Decision["record"]>;
    return {
      reviewId: reviewIdFor(arrival, d), reason: d.review?.reason ?? "conflict", naturalKey: record.naturalKey, fingerprint: record.fingerprint,
      recordIndex: d.item.index, record: JSON.stringify({ record: { ...record, amount: record.amount.toString() } } satisfies ReviewRecord),
      matchedRef: d.review?.matchedRef ?? null,
    };
  }));
  // Held for review: told in the same transaction, keyed by the review item (one per key and content).
  await enqueueEvents(tx, held.map((d) => {
    const record = d.record as NonNullable<Decision["record"]>;
    const reviewId = reviewIdFor(arrival, d);
    return {
      tenantId, eventType: `record.${d.review?.reason ?? "held"}`, eventKey: `${reviewId}:held`,
      data: { reviewId, reason: d.review?.reason, naturalKey: record.naturalKey, fileId: arrival.fileId, recordIndex: d.item.index, matchedRef: d.review?.matchedRef ?? null, amountMinor: record.amount, currency: record.currency },
    };
  }));
}

function dedupReasonOf(decision: Decision): string | undefined {
  if (decision.legOf !== undefined) return decision.code === "RECORD_SAME_PAYMENT" ? "same_payment_other_channel" : "payment_leg";
  const outcome = decision.outcome;
  return outcome === "duplicate" || outcome === "conflict" || outcome === "suspect" ? outcome : undefined;
}

/** The channel and reason of each repeat, link or hold among the decisions, for the dedup counter. */
function dedupsOf(decisions: readonly Decision[]): Array<{ channel: DedupChannel; reason: string }> {
  const dedups: Array<{ channel: DedupChannel; reason: string }> = [];
  for (const decision of decisions) {
    const reason = dedupReasonOf(decision);
    if (decision.record && reason !== undefined) dedups.push({ channel: decision.record.channel as DedupChannel, reason });
  }
  return dedups;
}

function dedupEventsOf(context: RecordContext, arrival: RequestArrival, decisions: readonly Decision[]): DedupEvent[] {
  const events: DedupEvent[] = [];
  for (const decision of decisions) {
    const record = decision.record;
    const reason = dedupReasonOf(decision);
    if (!record || reason === undefined) continue;
    const event: DedupEvent = { tenantId: context.tenantId, channel: arrival.channel, scope: arrival.scope, dedupKey: record.naturalKey, reason, position: decision.item.position };
    if (decision.originalRef !== undefined) event.originalRef = decision.originalRef;
    events.push(event);
  }
  return events;
}
