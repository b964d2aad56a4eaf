import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { storedContent } from "./receipt.ts";
import { parseAch } from "../protocols/ach/reader.ts";
import { returnFileModel, type ReturnedEntry } from "../protocols/ach/return-builder.ts";
import type { AchEntry } from "../protocols/ach/types.ts";
import { writeAchFile } from "../protocols/ach/writer.ts";
import { announceOutboundFile } from "../partners/outbound/announce.ts";
import { storeOutboundFile } from "../partners/outbound/outbound-store.ts";
import {
  lockPendingReturns, refuseReturns, stampReturns, type PendingReturn, type RefusedReturn,
} from "../partners/returns/return-store.ts";
import { achDateToIso } from "../normalize/from-ach.ts";
import { judgeAchReturn } from "../protocols/ach/return-deadlines.ts";

export type CutResult =
  // notSent: why the file was kept but not queued for the partner (no outbound channel configured).
  // refused: returns past their deadline, left out of the file and never cut (decision 0094).
  | { kind: "cut"; fileKey: string; fileName: string; entries: number; notSent?: string;
    refused?: RefusedReturn[] }
  | { kind: "empty"; refused?: RefusedReturn[] }
  | { kind: "exists"; fileKey: string };

/** The key of the return file a partner's cut at a cut-off makes: the same cut repeated is the same file. */
export function returnFileKeyOf(partnerId: string, cutoffAt: Date): string {
  return `${partnerId}:returns:${cutoffAt.toISOString()}`;
}

/**
 * Assembles the partner's returns recorded up to the cut-off into one NACHA return file, in ONE
 * transaction: lock the pending returns, rebuild each original entry from its stored file, write
 * the file, store it for the partner under the cut's key, announce it to the outbox, stamp the
 * returns with the key. A crash before the commit leaves every return pending; after it, every
 * return is in exactly one file (docs/decisions/0025).
 */
export async function cutReturnFile(pool: Pool, tenantId: string, partnerId: string, cutoffAt: Date): Promise<CutResult> {
  return withTransaction(pool, async (tx) => {
    const pending = await lockPendingReturns(tx, tenantId, partnerId, cutoffAt, limits.partners.returnEntriesPerFileMax);
    if (pending.length === 0) return { kind: "empty" } as const;
    const fileKey = returnFileKeyOf(partnerId, cutoffAt);
    const judged = pastDeadline(await returnedEntries(tx, tenantId, pending), pending, cutoffAt);
    await refuseReturns(tx, tenantId, judged.refused);
    const refused = judged.refused.length > 0 ? { refused: judged.refused } : {};
    const entries = judged.timely.map((t) => t.entry);
    if (entries.length === 0) return { kind: "empty", ...refused } as const;
    const written = writeAchFile(returnFileModel({ createdAt: cutoffAt, entries }));
    // Every field comes from an entry our own reader accepted, or from the cut: a refusal is our bug.
    assert(written.ok, `the return file of ${fileKey} is written: ${written.ok ? "" : written.error.message}`);
    const fileName = `returns-${cutoffAt.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}.ach`;
    const file = { tenantId, partnerId, fileKey, kind: "ach.return-file", fileName, content: written.value } as const;
    if (!(await storeOutboundFile(tx, file))) return { kind: "exists", fileKey } as const;
    const announced = await announceOutboundFile(tx, file);
    const cutKeys = judged.timely.map((t) => t.pending.naturalKey);
    await stampReturns(tx, tenantId, cutKeys, fileKey);
    const notSent = announced.queued ? {} : { notSent: `not sent to partner ${announced.partnerName}: ${announced.reason}` };
    return { kind: "cut", fileKey, fileName, entries: cutKeys.length, ...notSent, ...refused } as const;
  });
}

/** The pending returns' original entries, read back from their stored files (each file read once). */
async function returnedEntries(tx: Tx, tenantId: string, pending: readonly PendingReturn[]): Promise<ReturnedEntry[]> {
  const fileIds = [...new Set(pending.map((p) => p.fileId))];
  assert(fileIds.length <= limits.partners.returnSourceFilesPerCutMax, `a cut reads at most ${limits.partners.returnSourceFilesPerCutMax} files`);
  const byFile = new Map<string, { header: Record<string, string>; entries: Map<number, AchEntry> }>();
  for (const fileId of fileIds) {
    const pieces: Uint8Array[] = [];
    for await (const piece of storedContent(tx, tenantId, fileId)) pieces.push(piece);
    const parsed = parseAch(Buffer.concat(pieces));
    const entries = new Map<number, AchEntry>();
    for (const batch of parsed.batches) for (const entry of batch.entries) entries.set(entry.record.line, entry);
    byFile.set(fileId, { header: parsed.fileHeader?.fields ?? {}, entries });
  }
  return pending.map((p) => {
    const file = byFile.get(p.fileId);
    const entry = file?.entries.get(p.line);
    assert(file !== undefined && entry !== undefined, `return ${p.naturalKey}: line ${p.line} of file ${p.fileId} is an entry`);
    return { fileHeader: file.header, batchHeader: entry.batchHeader.fields, entry: entry.record.fields, reasonCode: p.reasonCode, batchRef: `${p.fileId}:${entry.batchOrdinal}` };
  });
}

/**
 * The cut's returns split by NACHA's deadline (docs/decisions/0094): a return's date is the
 * cut-off's (the file's effective entry date), its original's the entry's effective entry date.
 * A return past its deadline is refused with RETURN_DEADLINE_PASSED, naming the deadline; one
 * that cannot be judged (a date the calendar does not cover) goes out as before.
 */
function pastDeadline(
  entries: readonly ReturnedEntry[], pending: readonly PendingReturn[], cutoffAt: Date,
): { timely: Array<{ entry: ReturnedEntry; pending: PendingReturn }>; refused: RefusedReturn[] } {
  const timely: Array<{ entry: ReturnedEntry; pending: PendingReturn }> = [];
  const refused: RefusedReturn[] = [];
  const returnDate = cutoffAt.toISOString().slice(0, 10);
  entries.forEach((entry, index) => {
    const returned = pending[index];
    assert(returned !== undefined, "one pending return per returned entry");
    const effective = achDateToIso((entry.batchHeader.effectiveEntryDate ?? "").trim());
    const judged = effective === undefined ? undefined : judgeAchReturn({
      reasonCode: entry.reasonCode, originalEffectiveDate: effective, returnDate,
    });
    if (judged?.kind !== "late") {
      timely.push({ entry, pending: returned });
      return;
    }
    const detail = `return ${entry.reasonCode} of ${returned.naturalKey} on ${returnDate} is past`
      + ` its deadline ${judged.deadline} (${judged.timeFrame.name} from ${effective}): not sent`;
    refused.push({ naturalKey: returned.naturalKey, code: "RETURN_DEADLINE_PASSED", detail });
  });
  return { timely, refused };
}
