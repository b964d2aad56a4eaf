import type { Pool } from "../db/pool.ts";
import type { FileFormat } from "../protocols/detect-format.ts";
import { decideSameBytesRange } from "../records/index.ts";
import { countChunkRecords, inChunkTransaction } from "./chunk.ts";
import { ingestFaultPoint } from "./fault-points.ts";
import type { FileScan } from "./file-reader.ts";

/** An earlier file with the same bytes that applied every one of its records itself. */
export interface SameBytesFile {
  fileId: string;
  contentHash: string;
}

/**
 * The earlier file of the tenant with exactly these bytes (same SHA-256 and size) that applied
 * every one of its records itself, read to the end (docs/decisions/0055). Only one file can have
 * applied a given key first, so at most one qualifies. None when this file's reader would refuse
 * a record (its scan says so): reading it could then decide otherwise than the earlier file did.
 */
export async function findSameBytesFile(pool: Pool, file: { tenantId: string; fileId: string }, scan: FileScan): Promise<SameBytesFile | undefined> {
  if (!scan.format || scan.rejected || scan.recordsRejected > 0 || scan.recordsTotal === 0) return undefined;
  const { rows } = await pool.query<{ file_id: string; content_hash: string }>(
    `SELECT e.file_id, e.content_hash FROM received_file f
       JOIN received_file e ON e.tenant_id = f.tenant_id AND e.bytes_sha256 = f.bytes_sha256
      WHERE f.tenant_id = $1 AND f.file_id = $2 AND e.file_id <> f.file_id AND e.size_bytes = f.size_bytes
        AND e.status = 'done' AND e.format = $3 AND e.records_total = $4 AND e.applied = e.records_total AND e.content_hash IS NOT NULL
      ORDER BY e.received_at, e.file_id LIMIT 1`,
    [file.tenantId, file.fileId, scan.format, scan.recordsTotal]);
  const row = rows[0];
  return row ? { fileId: row.file_id, contentHash: row.content_hash } : undefined;
}

export type SameBytesAnswer =
  | { kind: "complete" }
  | { kind: "fenced" }                               // another worker moved the file on
  | { kind: "read"; recordsDone: number };           // some record needs reading: read from here on

/**
 * Answers a file's records from the earlier file with its bytes, chunk by chunk, each chunk one
 * transaction that writes its outcome rows and advances the file, like a read chunk (fenced the
 * same way, resumed at records_done after a crash). A chunk whose records are not all answered
 * this way is rolled back, and the file is read from that chunk on.
 */
export async function answerFromSameBytesFile(
  pool: Pool, file: { tenantId: string; fileId: string; format: FileFormat }, earlier: SameBytesFile,
  progress: {
    recordsDone: number; recordsTotal: number; chunkRecordsMax: number;
    onProgress?: (done: number, total: number) => void; isStopped?: () => boolean;
  },
): Promise<SameBytesAnswer> {
  let done = progress.recordsDone;
  while (done < progress.recordsTotal) {
    // Stopped between two chunks: left `processing`, resumed later from records_done.
    if (progress.isStopped?.() === true) return { kind: "fenced" };
    const records = Math.min(progress.chunkRecordsMax, progress.recordsTotal - done);
    const fromIndex = done;
    const result = await inChunkTransaction(pool, file, { chunkStart: fromIndex, records }, async (tx) => {
      const counts = await decideSameBytesRange(tx, {
        tenantId: file.tenantId, fileId: file.fileId, sameBytesFileId: earlier.fileId, channel: file.format, fromIndex, records,
      });
      // The receipt names the file whose records answered this one's, with the first answers of
      // this run (a resumed run writes it again: the same value).
      if (counts && fromIndex === progress.recordsDone) {
        await tx.query(
          `UPDATE received_file SET same_bytes_as = $3 WHERE tenant_id = $1 AND file_id = $2`,
          [file.tenantId, file.fileId, earlier.fileId]);
      }
      return counts;
    });
    if (result.kind === "fenced") return { kind: "fenced" };
    if (result.kind === "undecided") return { kind: "read", recordsDone: done };
    done += records;
    countChunkRecords(file.format, result.counts);
    progress.onProgress?.(done, progress.recordsTotal);
    ingestFaultPoint("ingest_chunk_after_commit");
  }
  return { kind: "complete" };
}
