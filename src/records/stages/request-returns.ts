import type { Tx } from "../../db/transaction.ts";
import { transferLegs } from "../../ledger/stored-transfers.ts";
import { reversalFor, reversalKeyOf } from "../../normalize/posting-rules.ts";
import { decide, type Candidate, type RecordContext } from "../decision.ts";
import { selectReturnTargets, type KeyStateChange, type ReturnTargetRow } from "../store/keys.ts";
import { postAndDecide } from "./post-records.ts";

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
 * is the ledger's last line.
 */
export async function matchRequestReturns(tx: Tx, context: RecordContext, fresh: Set<Candidate>): Promise<KeyStateChange[]> {
  const returns = [...fresh].filter((d) => d.outcome === undefined && d.rule.action === "reverse-original");
  if (returns.length === 0) return [];
  const rows = await selectReturnTargets(tx, context.tenantId, returns.map((d) => d.record.original ?? ""), returns.map((d) => d.record.naturalKey));
  const states: KeyStateChange[] = [];
  const toPost: Array<{ decision: Candidate; original: ReturnTargetRow }> = [];
  for (const decision of returns) {
    const originalKey = decision.record.original ?? "";
    const earlier = rows.find((r) => r.role === "return" && r.original_key === originalKey);
    const original = rows.find((r) => r.role === "original" && r.natural_key === originalKey);
    if (earlier !== undefined) {
      states.push(decideRepeatedReturn(decision, earlier));
    } else if (original === undefined) {
      decide(decision, "orphan", "INGEST_RECORD_ORPHAN", "no original found; it is refused if it arrives later");
    } else if (original.currency !== decision.record.currency || decision.record.amount > original.amount_minor) {
      decide(decision, "rejected", "RECORD_REVERSAL_ABOVE_ORIGINAL", `original ${originalKey} is ${original.amount_minor} ${original.currency}`);
      states.push({ naturalKey: decision.record.naturalKey, state: "rejected", transferKey: null, matchedKey: null });
    } else if (original.state !== "applied" || original.transfer_key === null || decision.record.amount === 0n) {
      decide(decision, "applied", "RECORD_NOTHING_TO_REVERSE", `original ${originalKey} ${original.transfer_key === null ? "moved no money" : "stands at its whole amount"}`);
      decision.originalRef = original.transfer_key ?? originalKey;
      states.push({ naturalKey: decision.record.naturalKey, state: "applied", transferKey: null, matchedKey: originalKey });
    } else {
      toPost.push({ decision, original });
    }
  }
  if (toPost.length > 0) states.push(...await postReversals(tx, context, toPost));
  return states;
}

/** The original has a return already: the same content is a duplicate of it, other content is refused. */
function decideRepeatedReturn(decision: Candidate, earlier: ReturnTargetRow): KeyStateChange {
  decision.originalRef = earlier.transfer_key ?? earlier.natural_key;
  const naturalKey = decision.record.naturalKey;
  if (earlier.fingerprint === decision.record.fingerprint) {
    decide(decision, "duplicate", "INGEST_RECORD_DUPLICATE", `the same reversal as ${earlier.natural_key}`);
    return { naturalKey, state: "applied", transferKey: null, matchedKey: earlier.natural_key };
  }
  decide(decision, "conflict", "RECORD_ORIGINAL_ALREADY_REVERSED", `${earlier.natural_key} reverses ${earlier.original_key ?? ""} already, with other content`);
  return { naturalKey, state: "refused", transferKey: null, matchedKey: earlier.natural_key };
}

async function postReversals(tx: Tx, context: RecordContext, toPost: Array<{ decision: Candidate; original: ReturnTargetRow }>): Promise<KeyStateChange[]> {
  const legsByTransfer = await transferLegs(tx, context.tenantId, toPost.map((p) => p.original.transfer_key as string));
  for (const { decision, original } of toPost) {
    const transferKey = original.transfer_key as string;
    const legs = legsByTransfer.get(transferKey);
    if (legs === undefined) throw new Error(`original transfer ${transferKey} of ${original.natural_key} is not in the ledger`);
    const key = reversalKeyOf(decision.record, decision.rule, { naturalKey: original.natural_key, transferKey });
    decision.transfer = reversalFor(decision.record, legs, key.transferKey, key.kind);
  }
  await postAndDecide(tx, toPost.map((p) => p.decision));
  return toPost.map(({ decision, original }) => {
    if (decision.outcome === "applied") decision.originalRef = original.transfer_key as string;
    const state = decision.outcome === "applied" ? "applied" : decision.outcome === "duplicate" ? "applied" : decision.outcome === "rejected" ? "rejected" : "refused";
    return { naturalKey: decision.record.naturalKey, state, transferKey: decision.outcome === "applied" ? (decision.transferKey ?? null) : null, matchedKey: original.natural_key };
  });
}
