import type { Tx } from "../../db/transaction.ts";
import { transferLegs } from "../../ledger/index.ts";
import { reversalFor, reversalKeyOf } from "../../normalize/posting-rules.ts";
import type { Candidate, Decided, Outcome, RecordContext } from "../decision.ts";
import { selectReturnTargets, type KeyStateChange, type ReturnTargetRow } from "../store/keys.ts";
import { postCandidates, type Posting } from "./post-records.ts";

/** What a returns stage decided, and the dedup marks whose state it changed. */
export interface ReturnsDecided {
  decided: Decided;
  states: KeyStateChange[];
}

/** A return whose original posted a transfer: that transfer's legs are posted reversed. */
interface ToReverse {
  candidate: Candidate;
  original: ReturnTargetRow;
  originalTransferKey: string;
}

/**
 * Returns that arrive by request or message, one sender waiting for the answer (an ISO 8583
 * reversal, docs/decisions/0039). Matched with their original by the key they name, never by
 * fallback ids. An original is reversed at most once:
 * - a later return of it with the first one's content is a `duplicate` (nothing posted);
 * - with other content it is refused to its sender (`conflict`, key state `refused`);
 * - a return of an unknown original stays an `orphan` (recorded, nothing posted);
 * - a return of an original that moved no money, or that undoes nothing (amount 0), is applied
 *   and linked, nothing posted;
 * - else the original's legs are posted reversed for the return's amount (at most the original's),
 *   under the key and kind its rule derives from the original's transfer, with the rule's
 *   suspense fallback when the funds refuse it.
 * Requests take no tenant lock: the caller serializes the returns of one original (the gateway's
 * lock on the original's key), and the reversal's transfer key, derived from the original's,
 * is the ledger's last line. `returns` are the new returns still undecided.
 */
export async function matchRequestReturns(
  tx: Tx, context: RecordContext, returns: readonly Candidate[],
): Promise<ReturnsDecided> {
  const decided: Decided = new Map();
  const states: KeyStateChange[] = [];
  if (returns.length === 0) return { decided, states };
  const originalKeys = returns.map((d) => d.record.original ?? "");
  const keys = returns.map((d) => d.record.naturalKey);
  const rows = await selectReturnTargets(tx, context.tenantId, originalKeys, keys);
  const toPost: ToReverse[] = [];
  for (const candidate of returns) {
    const { record } = candidate;
    const naturalKey = record.naturalKey;
    const originalKey = record.original ?? "";
    const earlier = rows.find((r) => r.role === "return" && r.original_key === originalKey);
    const original = rows.find((r) => r.role === "original" && r.natural_key === originalKey);
    if (earlier !== undefined) {
      const repeated = decideRepeatedReturn(candidate, earlier);
      decided.set(candidate, repeated.outcome);
      states.push(repeated.state);
    } else if (original === undefined) {
      const detail = "no original found; it is refused if it arrives later";
      decided.set(candidate, { kind: "orphan", code: "RECORD_ORPHAN", detail });
    } else if (original.currency !== record.currency || record.amount > original.amount_minor) {
      const detail = `original ${originalKey} is ${original.amount_minor} ${original.currency}`;
      decided.set(candidate, { kind: "rejected", code: "RECORD_REVERSAL_ABOVE_ORIGINAL", detail });
      states.push({ naturalKey, state: "rejected", transferKey: null, matchedKey: null });
    } else if (original.state !== "applied" || original.transfer_key === null
      || record.amount === 0n) {
      const undone = original.transfer_key === null
        ? "moved no money" : "stands at its whole amount";
      decided.set(candidate, {
        kind: "applied", code: "RECORD_NOTHING_TO_REVERSE",
        detail: `original ${originalKey} ${undone}`,
        originalRef: original.transfer_key ?? originalKey,
      });
      states.push({ naturalKey, state: "applied", transferKey: null, matchedKey: originalKey });
    } else {
      toPost.push({ candidate, original, originalTransferKey: original.transfer_key });
    }
  }
  if (toPost.length > 0) states.push(...await postReversals(tx, context, toPost, decided));
  return { decided, states };
}

/**
 * The original has a return already: the same content is a duplicate of it, other content is
 * refused.
 */
function decideRepeatedReturn(
  candidate: Candidate, earlier: ReturnTargetRow,
): { outcome: Outcome; state: KeyStateChange } {
  const originalRef = earlier.transfer_key ?? earlier.natural_key;
  const naturalKey = candidate.record.naturalKey;
  const matchedKey = earlier.natural_key;
  if (earlier.fingerprint === candidate.record.fingerprint) {
    const detail = `the same reversal as ${earlier.natural_key}`;
    return {
      outcome: { kind: "duplicate", code: "RECORD_DUPLICATE", originalRef, detail },
      state: { naturalKey, state: "applied", transferKey: null, matchedKey },
    };
  }
  const reversed = earlier.original_key ?? "";
  const detail = `${earlier.natural_key} reverses ${reversed} already, with other content`;
  return {
    outcome: { kind: "conflict", code: "RECORD_ORIGINAL_ALREADY_REVERSED", detail, originalRef },
    state: { naturalKey, state: "refused", transferKey: null, matchedKey },
  };
}

async function postReversals(
  tx: Tx, context: RecordContext, toPost: readonly ToReverse[], decided: Decided,
): Promise<KeyStateChange[]> {
  const originalKeys = toPost.map((p) => p.originalTransferKey);
  const legsByTransfer = await transferLegs(tx, context.tenantId, originalKeys);
  const postings: Array<Posting & ToReverse> = toPost.map((reverse) => {
    const { candidate, original, originalTransferKey: transferKey } = reverse;
    const legs = legsByTransfer.get(transferKey);
    if (legs === undefined) {
      const where = `${transferKey} of ${original.natural_key}`;
      throw new Error(`original transfer ${where} is not in the ledger`);
    }
    const { record, rule } = candidate;
    const key = reversalKeyOf(record, rule, { naturalKey: original.natural_key, transferKey });
    return { ...reverse, transfer: reversalFor(record, legs, key.transferKey, key.kind) };
  });
  return (await postCandidates(tx, postings)).map((posted) => {
    const { candidate, original, transfer } = posted;
    const outcome = posted.outcome.kind === "applied"
      ? { ...posted.outcome, originalRef: posted.originalTransferKey } : posted.outcome;
    decided.set(candidate, outcome);
    const applied = outcome.kind === "applied";
    const state = applied || outcome.kind === "duplicate" ? "applied"
      : outcome.kind === "rejected" ? "rejected" : "refused";
    const transferKey = applied ? transfer.transferKey : null;
    const naturalKey = candidate.record.naturalKey;
    return { naturalKey, state, transferKey, matchedKey: original.natural_key };
  });
}
