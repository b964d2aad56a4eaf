import { createHash } from "node:crypto";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";

/** A review item's id derives from the key and the held content: one item per (key, content), for ever. */
export function reviewIdOf(naturalKey: string, fingerprint: string): string {
  return `rev_${createHash("sha256").update(`${naturalKey}\u0000${fingerprint}`).digest("hex").slice(0, 24)}`;
}

/** The record as kept for a review: enough to post it on a decision with the same posting rules. */
export interface ReviewRecord {
  record: Omit<CanonicalRecord, "amount"> & { amount: string };
}
