import type { Queryable } from "../../db/pool.ts";
import { decide, type Candidate, type RecordContext } from "../decision.ts";
import { selectRecentlyApplied } from "../store/keys.ts";

/**
 * A new key whose economic content (fingerprint) equals a record applied from another file
 * within the window: held for review, as when a corrected file renumbered its traces. Records of
 * the same file never make each other suspect (two payees paid the same in one file are two
 * payments). Only file arrivals are compared: a request names its own intent and is answered.
 */
export async function holdSuspects(tx: Queryable, context: RecordContext, fresh: Set<Candidate>): Promise<void> {
  if (context.arrival.kind !== "file") return;
  const candidates = [...fresh].filter((d) => d.outcome === undefined && d.rule.action === "post" && d.record.amount > 0n);
  if (candidates.length === 0) return;
  const matches = await selectRecentlyApplied(tx, context.tenantId, candidates.map((d) => d.record.fingerprint), context.arrival.fileId, context.suspectWindowHours);
  for (const decision of candidates) {
    const match = matches.get(decision.record.fingerprint);
    if (!match) continue;
    decide(decision, "suspect", "INGEST_RECORD_SUSPECT", `same content as ${match.natural_key}, applied from another file`);
    decision.originalRef = match.transfer_key ?? match.natural_key;
    decision.review = { reason: "suspect", matchedRef: match.natural_key };
  }
}
