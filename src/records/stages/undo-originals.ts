import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import { partialUndoFor } from "../../normalize/posting-rules.ts";
import type { Candidate, Decided, RecordContext, Rejected } from "../decision.ts";
import type { KeyStateChange } from "../store/keys.ts";
import {
  lockOriginalsToUndo, releaseFreshKeys, settleUndoMarks, type UndoOriginalRow,
} from "../store/undos.ts";
import { postCandidates, type PostedRecord } from "./post-records.ts";

/**
 * New records whose rule says `undo-named-original` (an HTTP refund; docs/decisions/0038) undo
 * part of the original they name by natural key: its legs mirrored for their amount, the undos of
 * one original never adding up above its amount. The originals' marks are locked first: that lock
 * serialises concurrent undos of one original until commit. A record refused as input (unknown or
 * unapplied original, another currency, more than remains) posts nothing and releases the key its
 * claim inserted; one the funds refuse keeps its key, `rejected`. `fresh` are the new records
 * still undecided.
 */
export async function undoNamedOriginals(
  tx: Tx, context: RecordContext, fresh: readonly Candidate[],
): Promise<Decided> {
  const decided: Decided = new Map();
  const undos = fresh.filter((d) => d.rule.action === "undo-named-original");
  if (undos.length === 0) return decided;
  const named = undos.map((d) => d.record.original ?? "");
  const originals = await lockOriginalsToUndo(tx, context.tenantId, named);
  // Undos of one original earlier in this batch count against it (conservatively, even one the funds then refuse).
  const reserved = new Map<string, bigint>();
  const toPost: Array<{ candidate: Candidate; original: UndoOriginalRow }> = [];
  for (const candidate of undos) {
    const original = originals.get(candidate.record.original ?? "");
    const reservedMinor = reserved.get(original?.natural_key ?? "") ?? 0n;
    const refused = refuseInvalidUndo(candidate, original, reservedMinor);
    if (refused !== undefined) {
      decided.set(candidate, refused);
    } else if (original !== undefined) {
      reserved.set(original.natural_key, reservedMinor + candidate.record.amount);
      toPost.push({ candidate, original });
    }
  }
  await releaseFreshKeys(tx, context.tenantId, [...decided.keys()].map((d) => d.record.naturalKey));
  if (toPost.length === 0) return decided;
  const posted = await postCandidates(tx, toPost.map(({ candidate, original }) => {
    assert(original.legs.length >= 2, `original ${original.natural_key} has the transfer ${original.transfer_key} its mark names`);
    const transfer = partialUndoFor(candidate.record, candidate.rule, original.legs);
    return { candidate, original, transfer };
  }));
  await settleUndos(tx, context, posted, decided);
  return decided;
}

/** An undo posted, with the original it undid. */
type PostedUndo = PostedRecord & { original: UndoOriginalRow };

/** The refusal of a record refused as input (nothing posted), or undefined: it may be posted. */
function refuseInvalidUndo(
  candidate: Candidate, original: UndoOriginalRow | undefined, reservedMinor: bigint,
): Rejected | undefined {
  const record = candidate.record;
  const named = record.original ?? "(none)";
  if (original === undefined) {
    const detail = `no record ${named} to undo`;
    return { kind: "rejected", code: "RECORD_ORIGINAL_UNKNOWN", detail };
  }
  if (original.state !== "applied" || original.transfer_key === null) {
    const postedNothing = original.transfer_key === null ? " and posted nothing" : "";
    const detail = `${named} is ${original.state}${postedNothing}`;
    return { kind: "rejected", code: "RECORD_ORIGINAL_NOT_APPLIED", detail };
  }
  if (original.currency !== record.currency) {
    const detail = `${named} is in ${original.currency}, the undo in ${record.currency}`;
    return { kind: "rejected", code: "RECORD_UNDO_CURRENCY_MISMATCH", detail };
  }
  const undoableMinor = original.amount_minor - original.undone_minor - reservedMinor;
  if (record.amount <= undoableMinor) return undefined;
  const detail = `at most ${undoableMinor} minor units of ${named} remain to undo`;
  return { kind: "rejected", code: "RECORD_UNDO_EXCEEDS_ORIGINAL", detail, undoableMinor };
}

/** Each posted undo's mark (applied and linked to its original, or rejected for funds) and what it took off its original. */
async function settleUndos(
  tx: Tx, context: RecordContext, posted: ReadonlyArray<PostedUndo>, decided: Decided,
): Promise<void> {
  const undone = new Map<string, bigint>();
  const states: KeyStateChange[] = [];
  for (const { candidate, original, transfer, outcome: byPosting } of posted) {
    const naturalKey = candidate.record.naturalKey;
    const matchedKey = original.natural_key;
    const outcome = { ...byPosting, originalRef: original.transfer_key ?? original.natural_key };
    decided.set(candidate, outcome);
    if (outcome.kind === "applied") {
      undone.set(matchedKey, (undone.get(matchedKey) ?? 0n) + candidate.record.amount);
      states.push({ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey });
    } else if (outcome.kind === "duplicate") {
      // Its transfer was in the ledger already (an undo from before its key was claimed): counted when it was posted.
      states.push({ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey });
    } else {
      const state = outcome.kind === "rejected" ? "rejected" : "refused";
      states.push({ naturalKey, state, transferKey: null, matchedKey: null });
    }
  }
  await settleUndoMarks(tx, context.tenantId, undone, states);
}
