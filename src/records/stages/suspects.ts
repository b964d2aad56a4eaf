import type { Queryable } from "../../db/pool.ts";
import type { Candidate, Decided, RecordContext } from "../decision.ts";
import { selectRecentlyApplied } from "../store/keys.ts";

/**
 * A new key whose economic content (fingerprint) equals a record applied from another file
 * within the window: held for review, as when a corrected file renumbered its traces. Records of
 * the same file never make each other suspect (two payees paid the same in one file are two
 * payments). Only file arrivals are compared: a request names its own intent and is answered.
 * `fresh` are the new records still undecided.
 */
export async function holdSuspects(
  tx: Queryable, context: RecordContext, fresh: readonly Candidate[],
): Promise<Decided> {
  const decided: Decided = new Map();
  if (context.arrival.kind !== "file") return decided;
  const candidates = fresh.filter((d) => d.rule.action === "post" && d.record.amount > 0n);
  if (candidates.length === 0) return decided;
  const fingerprints = candidates.map((d) => d.record.fingerprint);
  const { tenantId, arrival: { fileId }, suspectWindowHours: windowHours } = context;
  const matches = await selectRecentlyApplied(tx, tenantId, fingerprints, fileId, windowHours);
  for (const candidate of candidates) {
    const match = matches.get(candidate.record.fingerprint);
    if (!match) continue;
    decided.set(candidate, {
      kind: "suspect", code: "RECORD_SUSPECT",
      detail: `same content as ${match.natural_key}, applied from another file`,
      originalRef: match.transfer_key ?? match.natural_key,
      review: { matchedRef: match.natural_key },
    });
  }
  return decided;
}
