import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import { partialUndoFor } from "../../normalize/posting-rules.ts";
import { decide, type Candidate, type RecordContext } from "../decision.ts";
import type { KeyStateChange } from "../store/keys.ts";
import { lockOriginals, releaseFreshKeys, settleUndoMarks, type UndoOriginalRow } from "../store/undos.ts";
import { postAndDecide } from "./post-records.ts";

/**
 * New records whose rule says `undo-named-original` (an HTTP refund; docs/decisions/0038) undo
 * part of the original they name by natural key: its legs mirrored for their amount, the undos of
 * one original never adding up above its amount. The originals' marks are locked first: that lock
 * serialises concurrent undos of one original until commit. A record refused as input (unknown or
 * unapplied original, another currency, more than remains) posts nothing and releases the key its
 * claim inserted; one the funds refuse keeps its key, `rejected`.
 */
export async function undoNamedOriginals(tx: Tx, context: RecordContext, fresh: Set<Candidate>): Promise<void> {
  const undos = [...fresh].filter((d) => d.outcome === undefined && d.rule.action === "undo-named-original");
  if (undos.length === 0) return;
  const originals = await lockOriginals(tx, context.tenantId, undos.map((d) => d.record.original ?? ""));
  // Undos of one original earlier in this batch count against it (conservatively, even one the funds then refuse).
  const reserved = new Map<string, bigint>();
  const toPost: Array<{ decision: Candidate; original: UndoOriginalRow }> = [];
  for (const decision of undos) {
    const original = originals.get(decision.record.original ?? "");
    if (!refuseInvalidUndo(decision, original, reserved.get(original?.natural_key ?? "") ?? 0n) && original !== undefined) {
      reserved.set(original.natural_key, (reserved.get(original.natural_key) ?? 0n) + decision.record.amount);
      toPost.push({ decision, original });
    }
  }
  await releaseFreshKeys(tx, context.tenantId, undos.filter((d) => d.outcome === "rejected").map((d) => d.record.naturalKey));
  if (toPost.length === 0) return;
  for (const { decision, original } of toPost) {
    assert(original.legs.length >= 2, `original ${original.natural_key} has the transfer ${original.transfer_key} its mark names`);
    decision.transfer = partialUndoFor(decision.record, decision.rule, original.legs);
  }
  await postAndDecide(tx, toPost.map((p) => p.decision));
  await settleUndos(tx, context, toPost);
}

/** Decides a record refused as input (nothing posted) and says whether it was. */
function refuseInvalidUndo(decision: Candidate, original: UndoOriginalRow | undefined, reservedMinor: bigint): boolean {
  const named = decision.record.original ?? "(none)";
  if (original === undefined) {
    decide(decision, "rejected", "RECORD_ORIGINAL_UNKNOWN", `no record ${named} to undo`);
  } else if (original.state !== "applied" || original.transfer_key === null) {
    decide(decision, "rejected", "RECORD_ORIGINAL_NOT_APPLIED", `${named} is ${original.state}${original.transfer_key === null ? " and posted nothing" : ""}`);
  } else if (original.currency !== decision.record.currency) {
    decide(decision, "rejected", "RECORD_UNDO_CURRENCY_MISMATCH", `${named} is in ${original.currency}, the undo in ${decision.record.currency}`);
  } else {
    const undoableMinor = original.amount_minor - original.undone_minor - reservedMinor;
    if (decision.record.amount <= undoableMinor) return false;
    decide(decision, "rejected", "RECORD_UNDO_EXCEEDS_ORIGINAL", `at most ${undoableMinor} minor units of ${named} remain to undo`);
    decision.undoableMinor = undoableMinor;
  }
  return true;
}

/** Each posted undo's mark (applied and linked to its original, or rejected for funds) and what it took off its original. */
async function settleUndos(tx: Tx, context: RecordContext, posted: ReadonlyArray<{ decision: Candidate; original: UndoOriginalRow }>): Promise<void> {
  const undone = new Map<string, bigint>();
  const states: KeyStateChange[] = [];
  for (const { decision, original } of posted) {
    const naturalKey = decision.record.naturalKey;
    decision.originalRef = original.transfer_key ?? original.natural_key;
    if (decision.outcome === "applied") {
      undone.set(original.natural_key, (undone.get(original.natural_key) ?? 0n) + decision.record.amount);
      states.push({ naturalKey, state: "applied", transferKey: decision.transferKey ?? null, matchedKey: original.natural_key });
    } else if (decision.outcome === "duplicate") {
      // Its transfer was in the ledger already (an undo from before its key was claimed): counted when it was posted.
      states.push({ naturalKey, state: "applied", transferKey: decision.transferKey ?? null, matchedKey: original.natural_key });
    } else {
      states.push({ naturalKey, state: decision.outcome === "rejected" ? "rejected" : "refused", transferKey: null, matchedKey: null });
    }
  }
  await settleUndoMarks(tx, context.tenantId, undone, states);
}
