import type { Queryable } from "../db/pool.ts";
import { transfersWithLegs, type ShownTransfer } from "../ledger/index.ts";
import { compensationKeyOf } from "../normalize/posting-rules.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import type { KeyState, RecordOutcome } from "./record-states.ts";
import { requestDedupEventsOf, type DedupEventRow } from "../dedup/dedup-event.ts";
import {
  selectFileArrivals, selectHistoryKeys, selectHistoryReviews,
  type HistoryFileArrivalRow, type HistoryKeyRow, type HistoryReviewRow,
} from "./store/history.ts";

/**
 * One payment across channels (docs/decisions/0032): every arrival of a natural key, and of every
 * key that carries the same payment identity, whatever channel it came through (a file line, an
 * HTTP request, a card message), the decision taken on each, the review decisions, and the ledger
 * transfers they produced, in time order. Read-only.
 */
export interface RecordHistory {
  key: string;
  identity_key: string | null;
  records: Array<{ natural_key: string; channel: string; kind: string; state: KeyState; amount: string; currency: string; transfer_key: string | null; linked_to: string | null }>;
  events: HistoryEvent[];
  transfers: Array<{
    transfer_key: string; kind: string; value_date: string;
    settlement_date: string; settlement_date_recorded: boolean; source_ref: string | null; at: string; legs: Array<{ account: string; side: "D" | "C"; amount: string; currency: string }> }>;
}

export type HistoryEvent =
  | { at: string; type: "arrival"; channel: string; natural_key: string; via: string; outcome: RecordOutcome | "refused"; code: string | null; detail: string | null; transfer_key: string | null; original_ref: string | null }
  | { at: string; type: "held"; natural_key: string; review_id: string; reason: string; state: string }
  | { at: string; type: "decision"; natural_key: string; review_id: string; decision: string; reason: string; operator: string; posting_key: string | null; compensation_key: string | null };

export async function recordHistory(db: Queryable, tenantId: string, key: string): Promise<RecordHistory | undefined> {
  const keys = await selectHistoryKeys(db, tenantId, key);
  if (keys.length === 0) return undefined;
  const naturalKeys = keys.map((k) => k.natural_key);
  // A card reversal's repeats are recorded against its original (`reversal-of:<original key>`, decision 0039).
  const repeatKeys = [...naturalKeys, ...naturalKeys.map((k) => `reversal-of:${k}`)];
  const [files, repeats, reviews] = await Promise.all([
    selectFileArrivals(db, tenantId, naturalKeys), requestDedupEventsOf(db, tenantId, repeatKeys), selectHistoryReviews(db, tenantId, naturalKeys),
  ]);
  const events: HistoryEvent[] = [
    ...keys.filter((k) => k.file_id === null && !isLaterReturn(k)).map(requestArrival),
    ...files.map(fileArrival),
    ...repeats.map(repeatArrival),
    ...reviews.flatMap(reviewEvents),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const transferKeys = new Set<string>();
  for (const k of keys) if (k.transfer_key !== null) transferKeys.add(k.transfer_key);
  for (const f of files) if (f.transfer_key !== null) transferKeys.add(f.transfer_key);
  for (const r of reviews) for (const t of [r.posting_key, r.compensation_key]) if (t !== null) transferKeys.add(t);
  for (const t of [...transferKeys]) transferKeys.add(compensationKeyOf(t));
  const transfers = await transfersWithLegs(db, tenantId, [...transferKeys]);
  const asked = keys.find((k) => k.natural_key === key) ?? keys.find((k) => k.identity_key === key);
  return {
    key, identity_key: asked?.identity_key ?? null,
    records: keys.map((k) => ({
      natural_key: k.natural_key, channel: k.channel, kind: k.kind, state: k.state, amount: minorToDecimal(BigInt(k.amount_minor), k.currency),
      currency: k.currency, transfer_key: k.transfer_key, linked_to: k.matched_key,
    })),
    events,
    transfers: transfers.map(showTransfer),
  };
}

/**
 * A return by request decided against an earlier return of its original (a repeat under another
 * key, or a different second reversal): its arrival is the dedup record its channel wrote against
 * the original, listed with the repeats.
 */
function isLaterReturn(k: HistoryKeyRow): boolean {
  return k.original_ref !== null && k.matched_key !== null && k.matched_key !== k.original_ref;
}

/** The first arrival of a key that came by request: what the core decided is its key's state. */
function requestArrival(k: HistoryKeyRow): HistoryEvent {
  // A return or reversal linked to the original it names undid (part of) it, or found nothing to undo; another key linked
  // and posting nothing is that payment arriving again; one that posted and names another undid part of it.
  const undoes = k.original_ref !== null && k.matched_key === k.original_ref;
  const linked = k.matched_key !== null && k.transfer_key === null && !undoes;
  const outcome: RecordOutcome | "refused" = k.state === "applied" ? (linked ? "duplicate" : "applied") : k.state === "rejected" ? "rejected" : k.state === "orphan" ? "orphan" : "refused";
  const detail = k.matched_key === null ? null : linked ? `the same payment as ${k.matched_key}`
    : undoes && k.transfer_key === null ? `nothing to undo of ${k.matched_key}` : `undid part of ${k.matched_key}`;
  return {
    at: k.created_at, type: "arrival", channel: k.channel, natural_key: k.natural_key, via: k.position, outcome,
    code: null, detail, transfer_key: k.transfer_key, original_ref: null,
  };
}

function fileArrival(f: HistoryFileArrivalRow): HistoryEvent {
  return {
    at: f.at, type: "arrival", channel: "file", natural_key: f.natural_key, via: `file ${f.file_id} (${f.file_name}) record ${f.record_index}, ${f.position}`,
    outcome: f.outcome, code: f.code, detail: f.detail, transfer_key: f.transfer_key, original_ref: f.original_ref,
  };
}

/** Reasons a channel records a refused repeat with (94 to a different second reversal), and a return without its original. */
const conflictReasons = new Set(["conflict", "duplicate_transmission"]);

function repeatArrival(r: DedupEventRow): HistoryEvent {
  const outcome: RecordOutcome = conflictReasons.has(r.reason) ? "conflict" : r.reason === "suspect" ? "suspect" : r.reason === "orphan" ? "orphan" : "duplicate";
  return {
    at: r.at, type: "arrival", channel: r.channel, natural_key: r.dedup_key, via: `${r.scope}${r.position ? ` ${r.position}` : ""}`,
    outcome, code: r.reason, detail: null, transfer_key: null, original_ref: r.original_ref,
  };
}

function reviewEvents(r: HistoryReviewRow): HistoryEvent[] {
  const held: HistoryEvent = { at: r.created_at, type: "held", natural_key: r.natural_key, review_id: r.review_id, reason: r.reason, state: r.state };
  if (r.decision === null || r.decided_at === null) return [held];
  return [held, {
    at: r.decided_at, type: "decision", natural_key: r.natural_key, review_id: r.review_id, decision: r.decision, reason: r.decision_reason ?? "",
    operator: r.operator ?? "", posting_key: r.posting_key, compensation_key: r.compensation_key,
  }];
}

function showTransfer(t: ShownTransfer): RecordHistory["transfers"][number] {
  return {
    transfer_key: t.transferKey, kind: t.kind, value_date: t.valueDate,
    settlement_date: t.settlementDate, settlement_date_recorded: t.settlementDateRecorded,
    source_ref: t.sourceRef, at: t.createdAt,
    legs: t.legs.map((l) => ({ account: l.accountId, side: l.direction, amount: minorToDecimal(l.amountMinor, l.currency), currency: l.currency })),
  };
}
