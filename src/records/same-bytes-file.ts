import type { Tx } from "../db/transaction.ts";
import { countDedupDecisionsOf } from "../dedup/dedup-event.ts";
import type { Channel } from "../normalize/canonical-record.ts";
import { zeroCounts, type OutcomeCounts } from "./record-states.ts";
import { insertSameBytesRepeats } from "./store/arrivals.ts";

export interface SameBytesRange {
  tenantId: string;
  fileId: string;
  /** The earlier file with the same bytes that applied every one of its records. */
  sameBytesFileId: string;
  channel: Channel;
  fromIndex: number;     // records after this index...
  records: number;       // ...this many of them
}

/**
 * The record core's answer for a range of records of a file whose bytes equal an earlier file's
 * that applied every record itself (docs/decisions/0055): each record is a duplicate of the same
 * record of that file, exactly as reading it would decide (same key, same fingerprint, the mark
 * claimed by that record and unchanged since), with one outcome row each, the dedup record of a
 * file's repeat (0053). Nothing is posted. In the caller's chunk transaction, under the tenant's
 * ingestion lock, so no review decision changes a mark meanwhile.
 *
 * Undefined when some record of the range is not answered that way (a person replaced it since):
 * the caller rolls the transaction back and reads the records, which decides them as always.
 */
export async function decideSameBytesRange(tx: Tx, range: SameBytesRange): Promise<OutcomeCounts | undefined> {
  const written = await insertSameBytesRepeats(tx, range.tenantId, range.fileId, range.sameBytesFileId, range.fromIndex, range.records);
  if (written !== range.records) return undefined;
  countDedupDecisionsOf(range.channel, "duplicate", written);
  return { ...zeroCounts(), duplicate: written };
}
