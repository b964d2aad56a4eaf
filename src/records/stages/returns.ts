import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import type { Finding, Result } from "../../errors/finding.ts";
import type { PostOutcome } from "../../ledger/post-outcome.ts";
import { postTransfers } from "../../ledger/post-transfers.ts";
import { transferLegs } from "../../ledger/stored-transfers.ts";
import type { Direction, Transfer } from "../../ledger/transfer.ts";
import type { CanonicalRecord } from "../../normalize/canonical-record.ts";
import { reversalFor } from "../../normalize/posting-rules.ts";
import { decide, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { decideFromPosting } from "./post-records.ts";
import { matchRequestReturns } from "./request-returns.ts";
import { hasOrphans, noteOrphanMatched, selectOriginals, selectReversedOriginals, selectWaitingOrphans, type KeyStateChange, type OrphanRow, type OriginalRow } from "../store/keys.ts";

type Legs = Array<{ accountId: string; direction: Direction }>;

/** A return to post: a record of this chunk, or an orphan whose original arrived in this chunk. */
interface PendingReversal {
  decision?: Candidate;
  orphan?: OrphanRow;
  original: OriginalRow;
  transfer?: Transfer;
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
 */
export async function matchReturns(tx: Tx, context: RecordContext, decisions: readonly Decision[], fresh: Set<Candidate>): Promise<KeyStateChange[]> {
  if (context.arrival.kind === "request") return matchRequestReturns(tx, context, fresh);
  const states: KeyStateChange[] = [];
  const reversedOriginals = new Set<string>();
  const pending = await matchChunkReturns(tx, context, fresh, reversedOriginals, states);
  pending.push(...await matchWaitingOrphans(tx, context, decisions, fresh, reversedOriginals));
  if (pending.length === 0) return states;
  await buildReversals(tx, context, fresh, pending);
  const posted = await postTransfers(tx, pending.map((p) => ({
    ...p, transfer: p.transfer as Transfer,
  })));
  for (const { outcome, ...item } of posted) {
    states.push(...await settleReversal(tx, context, item, outcome));
  }
  return states;
}

async function matchChunkReturns(tx: Tx, context: RecordContext, fresh: Set<Candidate>, reversedOriginals: Set<string>, states: KeyStateChange[]): Promise<PendingReversal[]> {
  const returns = [...fresh].filter((d) => d.outcome === undefined && d.rule.action === "reverse-original");
  if (returns.length === 0) return [];
  const refs = returns.map((d) => d.record.original).filter((r): r is string => r !== undefined);
  const rows = await selectOriginals(tx, context.tenantId, refs, returns.flatMap((d) => d.item.originalIds));
  const alreadyReversed = await selectReversedOriginals(tx, context.tenantId, rows.map((r) => r.natural_key));
  const pending: PendingReversal[] = [];
  for (const decision of returns) {
    const record = decision.record;
    const named = rows.filter((r) => record.original !== undefined && (r.natural_key === record.original || r.link_id1 === record.original));
    const fallback = rows.filter((r) => decision.item.originalIds.some((id) => id === r.link_id1 || id === r.link_id2));
    const candidates = named.length > 0 ? named : fallback;
    const confirmed = candidates.find((r) => r.currency === record.currency && amountConfirms(record.channel, record.amount, r.amount_minor));
    if (!confirmed) {
      const mismatch = candidates.length > 0;
      decide(decision, "orphan", mismatch ? "INGEST_RETURN_AMOUNT_MISMATCH" : "INGEST_RECORD_ORPHAN",
        mismatch ? `original ${candidates[0]?.natural_key} has another amount` : "no original found; matched when it arrives");
      continue;
    }
    if (alreadyReversed.has(confirmed.natural_key) || reversedOriginals.has(confirmed.natural_key)) {
      decide(decision, "suspect", "INGEST_RECORD_SUSPECT", `original ${confirmed.natural_key} was already returned`);
      decision.originalRef = confirmed.transfer_key;
      decision.review = { reason: "suspect", matchedRef: confirmed.natural_key };
      states.push({ naturalKey: record.naturalKey, state: "held", transferKey: null, matchedKey: null });
      continue;
    }
    reversedOriginals.add(confirmed.natural_key);
    decision.linkNotes = linkNotesOf(record, named.includes(confirmed), confirmed);
    pending.push({ decision, original: confirmed });
  }
  return pending;
}

/** Records applied in this chunk offered to the returns waiting for them (a late original). */
async function matchWaitingOrphans(tx: Tx, context: RecordContext, decisions: readonly Decision[], fresh: Set<Candidate>, reversedOriginals: Set<string>): Promise<PendingReversal[]> {
  const applied = [...fresh].filter((d) => d.outcome === "applied" && d.transfer !== undefined);
  // Orphans are looked up under the tenant's ingestion lock, which only file chunks take.
  if (context.arrival.kind !== "file" || applied.length === 0 || !(await hasOrphans(tx, context.tenantId))) return [];
  const chunkKeys = new Set(decisions.flatMap((d) => (d.record ? [d.record.naturalKey] : [])));
  const rows = await selectWaitingOrphans(tx, context.tenantId, applied.flatMap((d) => [d.record.naturalKey, ...d.item.linkIds]), applied.flatMap((d) => d.item.linkIds));
  const pending: PendingReversal[] = [];
  for (const orphan of rows) {
    if (chunkKeys.has(orphan.natural_key)) continue;   // this chunk's own returns were matched above
    const named = applied.filter((d) => orphan.original_ref !== null && (d.record.naturalKey === orphan.original_ref || d.item.linkIds[0] === orphan.original_ref));
    const fallback = applied.filter((d) => d.item.linkIds.some((id) => id === orphan.original_id1 || id === orphan.original_id2));
    const match = (named.length > 0 ? named : fallback).find((d) => d.record.currency === orphan.currency && amountConfirms(orphan.channel, orphan.amount_minor, d.record.amount));
    if (!match || reversedOriginals.has(match.record.naturalKey)) continue;
    reversedOriginals.add(match.record.naturalKey);
    const original = match.record;
    pending.push({ orphan, original: {
      natural_key: original.naturalKey, link_id1: match.item.linkIds[0] ?? null, link_id2: match.item.linkIds[1] ?? null,
      amount_minor: original.amount, currency: original.currency, transfer_key: (match.transfer as Transfer).transferKey, channel: original.channel,
    } });
  }
  return pending;
}

/** The originals' legs (from this chunk's own postings, else from the ledger), mirrored for each return. */
async function buildReversals(tx: Tx, context: RecordContext, fresh: Set<Candidate>, pending: PendingReversal[]): Promise<void> {
  const legsByTransfer = new Map<string, Legs>();
  for (const decision of fresh) {
    if (decision.outcome !== "applied" || decision.transfer === undefined) continue;
    legsByTransfer.set(decision.transfer.transferKey, decision.transfer.legs.map((l) => ({ accountId: l.accountId, direction: l.direction })));
  }
  const missing = pending.map((p) => p.original.transfer_key).filter((k) => !legsByTransfer.has(k));
  for (const [key, legs] of await transferLegs(tx, context.tenantId, missing)) legsByTransfer.set(key, legs);
  for (const item of pending) {
    const legs = legsByTransfer.get(item.original.transfer_key);
    assert(legs && legs.length === 2, `original ${item.original.transfer_key} has the two legs its rule posted`);
    const record = item.decision ? item.decision.record : orphanRecord(context, item.orphan as OrphanRow);
    item.transfer = reversalFor(record, legs);
  }
}

async function settleReversal(tx: Tx, context: RecordContext, item: PendingReversal, result: Result<PostOutcome, Finding>): Promise<KeyStateChange[]> {
  const transfer = item.transfer as Transfer;
  if (!item.decision) {
    if (!result.ok || result.value !== "applied") return [];
    const orphan = item.orphan as OrphanRow;
    await noteOrphanMatched(tx, context.tenantId, orphan, `matched with ${item.original.natural_key} when it arrived in ${context.arrival.kind === "file" ? context.arrival.fileId : "a request"}; reversal posted`);
    return [{ naturalKey: orphan.natural_key, state: "applied", transferKey: transfer.transferKey, matchedKey: item.original.natural_key }];
  }
  const decision = item.decision;
  decision.transfer = transfer;
  decideFromPosting(decision, result);
  decision.originalRef = item.original.transfer_key;
  const notes = decision.linkNotes ?? [];
  if (decision.outcome === "applied" && notes.length > 0) {
    decision.code = "INGEST_RETURN_LINK_WARNING";
    decision.detail = `linked to ${item.original.natural_key} by original trace and amount although ${notes.join("; ")}`;
  }
  const naturalKey = decision.record.naturalKey;
  if (decision.outcome === "applied") return [{ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey: item.original.natural_key }];
  if (decision.outcome === "rejected") return [{ naturalKey, state: "rejected", transferKey: null, matchedKey: null }];
  if (decision.outcome === "conflict") return [{ naturalKey, state: "held", transferKey: null, matchedKey: null }];
  return [];
}

/**
 * Why a return's link to its forward deserves a look although trace and amount confirm it: the
 * addenda's Original DFI names another RDFI (the link came from the trace alone), or the return kept
 * a forward transaction code. Neither stops the link (issue 16); each is a warning on the outcome.
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
    tenantId: context.tenantId, channel: orphan.channel as CanonicalRecord["channel"], naturalKey: orphan.natural_key, intentId: orphan.natural_key,
    kind: orphan.kind, amount: orphan.amount_minor, currency: orphan.currency, valueDate: orphan.value_date, fingerprint: orphan.fingerprint,
    source: { fileId: orphan.file_id, position: orphan.position }, attributes: {},
  };
}
