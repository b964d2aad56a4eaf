import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import {
  countDedupDecisions, recordDedupEvents, type DedupEvent,
} from "../../dedup/dedup-event.ts";
import type { Channel } from "../../normalize/canonical-record.ts";
import type { CanonicalRecord } from "../../normalize/canonical-record.ts";
import { enqueueEvents } from "../../outbox/outbox-store.ts";
import {
  appliedTransferKeyOf, originalRefOf, recordOutcomeOf, reviewReasonOf,
  type Conflict, type Decision, type FileArrival, type RecordContext, type RequestArrival,
  type Review, type Suspect,
} from "../decision.ts";
import type { ReviewReason } from "../record-states.ts";
import { insertOutcomes, insertReviews } from "../store/arrivals.ts";
import { reviewIdOf, type ReviewRecord } from "../review-id.ts";
import { reviewItemsByIds } from "../review-queue.ts";

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

async function writeOutcomes(
  tx: Tx, tenantId: string, arrival: FileArrival, decisions: readonly Decision[],
): Promise<void> {
  await insertOutcomes(tx, tenantId, arrival.fileId, decisions.map(({ item, record, outcome }) => ({
    recordIndex: item.index, position: item.position, naturalKey: record?.naturalKey ?? null,
    outcome: recordOutcomeOf(outcome), code: outcome.code ?? null,
    field: outcome.kind === "rejected" ? (outcome.field ?? null) : null,
    detail: outcome.detail ?? null, kind: record?.kind ?? null,
    amountMinor: record?.amount ?? null, currency: record?.currency ?? null,
    originalRef: originalRefOf(outcome) ?? null, transferKey: appliedTransferKeyOf(outcome),
  })));
}

/** A record held for a person: a conflict or suspect with its review. */
interface Held {
  index: number;
  record: CanonicalRecord;
  kind: (Conflict | Suspect)["kind"];
  reason: ReviewReason;
  review: Review;
}

function heldOf(decisions: readonly Decision[]): Held[] {
  return decisions.flatMap(({ item, record, outcome }) => {
    if (outcome.kind !== "conflict" && outcome.kind !== "suspect") return [];
    if (outcome.review === undefined) return [];
    assert(record, "a held record has a canonical record");
    const reason = reviewReasonOf(outcome);
    return [{ index: item.index, record, kind: outcome.kind, reason, review: outcome.review }];
  });
}

/** Records of one file sharing a key (even twins equal in every field) are separate review items. */
function reviewIdFor(arrival: FileArrival, held: Held): string {
  const { naturalKey, fingerprint } = held.record;
  if (!held.review.inFile) return reviewIdOf(naturalKey, fingerprint);
  return reviewIdOf(`${naturalKey}#${arrival.fileId}:${held.index}`, fingerprint);
}

async function writeReviews(
  tx: Tx, tenantId: string, arrival: FileArrival, decisions: readonly Decision[],
): Promise<void> {
  const held = heldOf(decisions);
  if (held.length === 0) return;
  await insertReviews(tx, tenantId, arrival.fileId, arrival.partnerId, held.map((h) => {
    const record = h.record;
    const stored: ReviewRecord = { record: { ...record, amount: record.amount.toString() } };
    return {
      reviewId: reviewIdFor(arrival, h), reason: h.reason, naturalKey: record.naturalKey,
      fingerprint: record.fingerprint, recordIndex: h.index, record: JSON.stringify(stored),
      matchedRef: h.review.matchedRef,
    };
  }));
  // Held for review: told in the same transaction, keyed by the review item (one per key and
  // content), with the item as the HTTP API lists it (docs/decisions/0107).
  const reviewIds = held.map((h) => reviewIdFor(arrival, h));
  const items = await reviewItemsByIds(tx, tenantId, reviewIds);
  await enqueueEvents(tx, held.map((h, i) => {
    const reviewId = reviewIds[i] ?? "";
    const item = items.get(reviewId);
    assert(item !== undefined, `review item ${reviewId} was written in this transaction`);
    return { tenantId, eventType: `record.${h.kind}`, eventKey: `${reviewId}:held`, data: item };
  }));
}

function dedupReasonOf(decision: Decision): string | undefined {
  const outcome = decision.outcome;
  if (outcome.kind === "linked") {
    return outcome.code === "RECORD_SAME_PAYMENT" ? "same_payment_other_channel" : "payment_leg";
  }
  const held = outcome.kind === "conflict" || outcome.kind === "suspect";
  return outcome.kind === "duplicate" || held ? outcome.kind : undefined;
}

/** The channel and reason of each repeat, link or hold among the decisions, for the dedup counter. */
function dedupsOf(decisions: readonly Decision[]): Array<{ channel: Channel; reason: string }> {
  const dedups: Array<{ channel: Channel; reason: string }> = [];
  for (const decision of decisions) {
    const reason = dedupReasonOf(decision);
    if (decision.record === undefined || reason === undefined) continue;
    dedups.push({ channel: decision.record.channel, reason });
  }
  return dedups;
}

function dedupEventsOf(
  context: RecordContext, arrival: RequestArrival, decisions: readonly Decision[],
): DedupEvent[] {
  const events: DedupEvent[] = [];
  for (const decision of decisions) {
    const record = decision.record;
    const reason = dedupReasonOf(decision);
    if (!record || reason === undefined) continue;
    const event: DedupEvent = {
      tenantId: context.tenantId, channel: arrival.channel, scope: arrival.scope,
      dedupKey: record.naturalKey, reason, position: decision.item.position,
    };
    const originalRef = originalRefOf(decision.outcome);
    if (originalRef !== undefined) event.originalRef = originalRef;
    events.push(event);
  }
  return events;
}
