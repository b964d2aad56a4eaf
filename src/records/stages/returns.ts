import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import {
  postTransfers, transferLegs, type Direction, type Posted, type Transfer,
} from "../../ledger/index.ts";
import type { CanonicalRecord } from "../../normalize/canonical-record.ts";
import type { ReceivedRecord } from "../../normalize/received-record.ts";
import { reversalFor } from "../../normalize/posting-rules.ts";
import type { Candidate, Decided, OutcomesSoFar, RecordContext } from "../decision.ts";
import { outcomeOfPosting, type PostingOutcome } from "./post-records.ts";
import { matchRequestReturns, type ReturnsDecided } from "./request-returns.ts";
import { lateReturnOf } from "./return-deadlines.ts";
import {
  hasOrphans, noteOrphanMatched, selectOriginals, selectReversedOriginals, selectWaitingOrphans,
  type KeyStateChange, type OrphanRow, type OriginalRow,
} from "../store/keys.ts";

type Legs = Array<{ accountId: string; direction: Direction }>;

/**
 * A return to post: a record of this chunk (with why its link deserves a look, if it does), or an
 * orphan whose original arrived in this chunk.
 */
type PendingReversal =
  | { kind: "return"; candidate: Candidate; original: OriginalRow; linkNotes: string[] }
  | { kind: "orphan"; orphan: OrphanRow; original: OriginalRow };

/** A record of this chunk applied with a transfer: an original a return may undo. */
interface PostedHere {
  candidate: Candidate;
  transfer: Transfer;
}

/** A return's amount confirms a link: equal for ACH (returns are whole); at most the original's for ISO 20022 (partial returns). */
function amountConfirms(channel: string, returned: bigint, original: bigint): boolean {
  return channel === "ach" ? returned === original : returned > 0n && returned <= original;
}

/**
 * Returns of this chunk are matched with their originals (by the key or link they name, else by
 * the fallback ids, confirmed by amount) and post the original's legs reversed; unmatched ones
 * stay orphans. Records applied in this chunk are then offered to the orphans waiting for them.
 * An original is reversed at most once; a second return of it is held for review.
 * A return that arrives by request (an ISO 8583 reversal) has its sender waiting: it is decided
 * against the original it names, there and then (request-returns.ts).
 * `items` are the batch's records, `fresh` its new ones (in the keys' sorted order) and `outcomes`
 * what the stages before decided: what this chunk posted are originals too.
 */
export async function matchReturns(
  tx: Tx, context: RecordContext, items: readonly ReceivedRecord[], fresh: ReadonlySet<Candidate>,
  outcomes: OutcomesSoFar,
): Promise<ReturnsDecided> {
  const returns = [...fresh]
    .filter((c) => c.rule.action === "reverse-original" && outcomes.of(c) === undefined);
  if (context.arrival.kind === "request") return matchRequestReturns(tx, context, returns);
  const posted = [...fresh].flatMap((candidate): PostedHere[] => {
    const outcome = outcomes.of(candidate);
    const transfer = outcome?.kind === "applied" ? outcome.transfer : undefined;
    return transfer === undefined ? [] : [{ candidate, transfer }];
  });
  const reversedOriginals = new Set<string>();
  const chunk = await matchChunkReturns(tx, context, returns, reversedOriginals);
  const { pending, decided, states } = chunk;
  pending.push(...await matchWaitingOrphans(tx, context, items, posted, reversedOriginals));
  if (pending.length === 0) return { decided, states };
  const reversals = await buildReversals(tx, context, posted, pending);
  for (const reversal of await postTransfers(tx, reversals)) {
    states.push(...await settleReversal(tx, context, reversal, decided));
  }
  return { decided, states };
}

async function matchChunkReturns(
  tx: Tx, context: RecordContext, returns: readonly Candidate[], reversedOriginals: Set<string>,
): Promise<ReturnsDecided & { pending: PendingReversal[] }> {
  const decided: Decided = new Map();
  const states: KeyStateChange[] = [];
  const pending: PendingReversal[] = [];
  if (returns.length === 0) return { decided, states, pending };
  const refs = returns.map((d) => d.record.original).filter((r): r is string => r !== undefined);
  const ids = returns.flatMap((d) => d.item.originalIds);
  const rows = await selectOriginals(tx, context.tenantId, refs, ids);
  const alreadyReversed = await selectReversedOriginals(tx, context.tenantId, rows.map((r) => r.natural_key));
  for (const candidate of returns) {
    const { record, item } = candidate;
    const named = rows.filter((r) => record.original !== undefined
      && (r.natural_key === record.original || r.link_id1 === record.original));
    const fallback = rows.filter((r) => item.originalIds
      .some((id) => id === r.link_id1 || id === r.link_id2));
    const candidates = named.length > 0 ? named : fallback;
    const confirmed = candidates.find((r) => r.currency === record.currency
      && amountConfirms(record.channel, record.amount, r.amount_minor));
    if (!confirmed) {
      decided.set(candidate, candidates.length > 0
        ? { kind: "orphan", code: "RECORD_RETURN_AMOUNT_MISMATCH",
          detail: `original ${candidates[0]?.natural_key} has another amount` }
        : { kind: "orphan", code: "RECORD_ORPHAN",
          detail: "no original found; matched when it arrives" });
      continue;
    }
    const originalKey = confirmed.natural_key;
    if (alreadyReversed.has(originalKey) || reversedOriginals.has(originalKey)) {
      decided.set(candidate, {
        kind: "suspect", code: "RECORD_SUSPECT",
        detail: `original ${originalKey} was already returned`,
        originalRef: confirmed.transfer_key, review: { matchedRef: originalKey },
      });
      states.push({ naturalKey: record.naturalKey, state: "held", transferKey: null, matchedKey: null });
      continue;
    }
    // A late return is not the RDFI's right: held for a person, who accepts or refuses it (0094).
    const late = lateReturnOf(record, confirmed);
    if (late !== undefined) {
      decided.set(candidate, {
        kind: "suspect", code: "RECORD_RETURN_LATE", detail: late.detail,
        originalRef: confirmed.transfer_key, review: { matchedRef: originalKey },
      });
      const naturalKey = record.naturalKey;
      states.push({ naturalKey, state: "held", transferKey: null, matchedKey: null });
      continue;
    }
    reversedOriginals.add(originalKey);
    const linkNotes = linkNotesOf(record, named.includes(confirmed), confirmed);
    pending.push({ kind: "return", candidate, original: confirmed, linkNotes });
  }
  return { decided, states, pending };
}

/** Records applied in this chunk offered to the returns waiting for them (a late original). */
async function matchWaitingOrphans(
  tx: Tx, context: RecordContext, items: readonly ReceivedRecord[], applied: readonly PostedHere[],
  reversedOriginals: Set<string>,
): Promise<PendingReversal[]> {
  // Orphans are looked up under the tenant's ingestion lock, which only file chunks take.
  if (context.arrival.kind !== "file" || applied.length === 0) return [];
  if (!(await hasOrphans(tx, context.tenantId))) return [];
  const chunkKeys = new Set(items.flatMap((item) => (item.record ? [item.record.naturalKey] : [])));
  const refs = applied.flatMap(({ candidate: d }) => [d.record.naturalKey, ...d.item.linkIds]);
  const ids = applied.flatMap((a) => a.candidate.item.linkIds);
  const rows = await selectWaitingOrphans(tx, context.tenantId, refs, ids);
  const pending: PendingReversal[] = [];
  for (const orphan of rows) {
    if (chunkKeys.has(orphan.natural_key)) continue;   // this chunk's own returns were matched above
    const ref = orphan.original_ref;
    const named = applied.filter(({ candidate: d }) => ref !== null
      && (d.record.naturalKey === ref || d.item.linkIds[0] === ref));
    const fallback = applied.filter(({ candidate: d }) => d.item.linkIds
      .some((id) => id === orphan.original_id1 || id === orphan.original_id2));
    const match = (named.length > 0 ? named : fallback).find(({ candidate: { record } }) =>
      record.currency === orphan.currency
      && amountConfirms(orphan.channel, orphan.amount_minor, record.amount));
    if (!match || reversedOriginals.has(match.candidate.record.naturalKey)) continue;
    reversedOriginals.add(match.candidate.record.naturalKey);
    const { item, record: original } = match.candidate;
    pending.push({ kind: "orphan", orphan, original: {
      natural_key: original.naturalKey, link_id1: item.linkIds[0] ?? null,
      link_id2: item.linkIds[1] ?? null, amount_minor: original.amount, currency: original.currency,
      transfer_key: match.transfer.transferKey, channel: original.channel,
      value_date: original.valueDate,
    } });
  }
  return pending;
}

/** The originals' legs (from this chunk's own postings, else from the ledger), mirrored for each return. */
async function buildReversals(
  tx: Tx, context: RecordContext, posted: readonly PostedHere[],
  pending: readonly PendingReversal[],
): Promise<Array<PendingReversal & { transfer: Transfer }>> {
  const legsByTransfer = new Map<string, Legs>();
  for (const { transfer } of posted) {
    const legs = transfer.legs.map((l) => ({ accountId: l.accountId, direction: l.direction }));
    legsByTransfer.set(transfer.transferKey, legs);
  }
  const missing = pending.map((p) => p.original.transfer_key).filter((k) => !legsByTransfer.has(k));
  for (const [key, legs] of await transferLegs(tx, context.tenantId, missing)) legsByTransfer.set(key, legs);
  return pending.map((item) => {
    const legs = legsByTransfer.get(item.original.transfer_key);
    assert(legs && legs.length === 2, `original ${item.original.transfer_key} has the two legs its rule posted`);
    const record = item.kind === "return"
      ? item.candidate.record : orphanRecord(context, item.orphan);
    return { ...item, transfer: reversalFor(record, legs) };
  });
}

/**
 * A posted reversal: a return of this chunk is decided by its posting (linked to its original,
 * with a warning where its link deserves a look); a waiting orphan is noted as matched.
 */
async function settleReversal(
  tx: Tx, context: RecordContext, reversal: Posted<PendingReversal & { transfer: Transfer }>,
  decided: Decided,
): Promise<KeyStateChange[]> {
  const { transfer, outcome: result, original } = reversal;
  const matchedKey = original.natural_key;
  if (reversal.kind === "orphan") {
    if (!result.ok || result.value !== "applied") return [];
    const orphan = reversal.orphan;
    const arrival = context.arrival.kind === "file" ? context.arrival.fileId : "a request";
    const note = `matched with ${matchedKey} when it arrived in ${arrival}; reversal posted`;
    await noteOrphanMatched(tx, context.tenantId, orphan, note);
    const naturalKey = orphan.natural_key;
    return [{ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey }];
  }
  const posted: PostingOutcome = {
    ...outcomeOfPosting(transfer, result), originalRef: original.transfer_key,
  };
  const notes = reversal.linkNotes;
  const outcome: PostingOutcome = posted.kind === "applied" && notes.length > 0 ? {
    ...posted, code: "RECORD_RETURN_LINK_WARNING",
    detail: `linked to ${matchedKey} by original trace and amount although ${notes.join("; ")}`,
  } : posted;
  decided.set(reversal.candidate, outcome);
  const naturalKey = reversal.candidate.record.naturalKey;
  switch (outcome.kind) {
    case "applied":
      return [{ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey }];
    case "rejected":
      return [{ naturalKey, state: "rejected", transferKey: null, matchedKey: null }];
    case "conflict": return [{ naturalKey, state: "held", transferKey: null, matchedKey: null }];
    case "duplicate": return [];
  }
}

/**
 * Why a return's link to its forward deserves a look although trace and amount confirm it: the
 * addenda's Original DFI names another RDFI (the link came from the trace alone), or the return
 * kept a forward transaction code. Neither stops the link (docs/decisions/0006); each is a warning
 * on the outcome.
 */
function linkNotesOf(record: CanonicalRecord, namedByOriginalDfi: boolean, original: OriginalRow): string[] {
  const notes: string[] = [];
  if (!namedByOriginalDfi && record.channel === "ach") {
    const forwardRdfi = original.link_id1?.split(":")[2];
    notes.push(`the addenda's Original DFI ${record.attributes.originalReceivingDfiIdentification ?? "(none)"} is not the forward's RDFI ${forwardRdfi ?? "(unknown)"}`);
  }
  if (record.attributes.linkWarning !== undefined) notes.push(record.attributes.linkWarning);
  return notes;
}

function orphanRecord(context: RecordContext, orphan: OrphanRow): CanonicalRecord {
  return {
    tenantId: context.tenantId, channel: orphan.channel, naturalKey: orphan.natural_key,
    intentId: orphan.natural_key,
    kind: orphan.kind, amount: orphan.amount_minor, currency: orphan.currency, valueDate: orphan.value_date, fingerprint: orphan.fingerprint,
    source: { fileId: orphan.file_id, position: orphan.position }, attributes: {},
  };
}
