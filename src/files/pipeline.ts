import { limits } from "../config/limits.ts";
import { enqueueEvent } from "../outbox/outbox-store.ts";
import type { Pool } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { ok, type Finding, type Result } from "../errors/finding.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import type { SeverityOverrides } from "../protocols/ach/types.ts";
import type { BusinessCalendar } from "../protocols/calendars/index.ts";
import type { FileFormat } from "../protocols/detect-format.ts";
import { ingestFilesByStatus, ingestFilesFinished, ingestOldestProcessingAge } from "../observability/metrics-ingest.ts";
import { commitChunk, countChunkRecords, type ChunkContext } from "./chunk.ts";
import { ingestFaultPoint } from "./fault-points.ts";
import { answerKinds } from "./file-class.ts";
import { fileRecords, scanFile, type ContentSource, type FileScan } from "./file-reader.ts";
import { ensurePartnerAccounts, findPartner } from "../partners/partners.ts";
import { receiveFile, storedContent, type IncomingFile } from "./receipt.ts";
import { answerFromSameBytesFile, findSameBytesFile } from "./same-bytes-file.ts";
import { fileEventData, fileReport, type FileReport } from "./report.ts";
import { reportFileRejection } from "./rejection-report.ts";
import { noteReportNotSent } from "./report-not-sent.ts";
import { reportFileStatus } from "./status-report.ts";

export interface IngestOptions {
  format?: FileFormat;                    // forced format; default: detected from the first bytes
  chunkRecordsMax?: number;
  suspectWindowHours?: number;
  achSeverityOverrides?: SeverityOverrides;
  /**
   * The calendar the file's partner settles on (config `partnerCalendars`, docs/decisions/0092,
   * 0101): ACH settlement dates roll on it. Default: the Federal Reserve's.
   */
  achCalendar?: BusinessCalendar;
  onProgress?: (recordsDone: number, recordsTotal: number) => void;
  /**
   * Asked before each chunk: true stops the file between two chunks (its source's lease was
   * lost, the service stops). The file stays `processing` and is resumed where it stopped.
   */
  isStopped?: () => boolean;
  /**
   * Told when a run of the file fails (an error, not a stop): the file is left `processing` and
   * the caller's process may take it up again (src/files/abandoned-files.ts).
   */
  onAbandoned?: (file: { tenantId: string; fileId: string }) => void;
}

/** Receives a file (stored before anything reads it), then processes it: the whole path of one arrival. */
export async function ingestArrival(
  pool: Pool, arrival: IncomingFile, options: IngestOptions = {},
): Promise<Result<FileReport, Finding>> {
  const receipt = await receiveFile(pool, arrival);
  if (!receipt.ok) return receipt;
  ingestFaultPoint("ingest_after_receipt");
  return ok(await processFile(pool, arrival.tenantId, receipt.value.fileId, options));
}

interface FileRow {
  partner_id: string;
  original_name: string;
  status: string;
  records_done: number;
}

/**
 * Processes a received file, or resumes one left in `processing` (its committed chunks are
 * skipped, not redone): a validation pass over the whole file first (a structurally broken file
 * is rejected and applies nothing), then the records in chunks, each chunk one transaction. A
 * finished file is returned as it is. Safe to run twice at once on one file: a chunk whose
 * progress moved on is fenced off.
 */
export async function processFile(
  pool: Pool, tenantId: string, fileId: string, options: IngestOptions = {},
): Promise<FileReport> {
  try {
    return await runFile(pool, tenantId, fileId, options);
  } catch (error) {
    options.onAbandoned?.({ tenantId, fileId });
    throw error;
  }
}

async function runFile(
  pool: Pool, tenantId: string, fileId: string, options: IngestOptions,
): Promise<FileReport> {
  const { rows } = await pool.query<FileRow>(
    `SELECT partner_id, original_name, status, records_done FROM received_file WHERE tenant_id = $1
       AND file_id = $2`, [tenantId, fileId]);
  const file = rows[0];
  if (!file) throw new Error(`file ${fileId} of tenant ${tenantId} does not exist`);
  if (file.status === "received") {
    await pool.query(
      `UPDATE received_file SET status = 'processing', updated_at = now() WHERE tenant_id = $1
         AND file_id = $2 AND status = 'received'`,
      [tenantId, fileId]);
  } else if (file.status !== "processing") {
    return reportOf(pool, tenantId, fileId);
  }
  const partner = await findPartner(pool, tenantId, file.partner_id);
  if (!partner) throw new Error(`partner ${file.partner_id} of file ${fileId} does not exist`);

  const content: ContentSource = () => storedContent(pool, tenantId, fileId);
  const readOptions = { fileName: file.original_name, ...(options.achSeverityOverrides ? { achSeverityOverrides: options.achSeverityOverrides } : {}) };
  const scan = await scanFile(content, { ...readOptions, ...(options.format ? { format: options.format } : {}) });
  ingestFaultPoint("ingest_after_scan");
  if (scan.rejected || !scan.format) {
    await rejectFile(pool, { tenantId, fileId, partnerId: partner.partnerId, originalName: file.original_name }, scan);
    return reportOf(pool, tenantId, fileId);
  }
  await pool.query(
    `UPDATE received_file SET format = $3, identity_key = $4, findings = $5::jsonb,
       records_total = $6, updated_at = now()
      WHERE tenant_id = $1 AND file_id = $2 AND status = 'processing'`,
    [tenantId, fileId, scan.format, scan.identityKey ?? null, JSON.stringify(scan.findings), scan.recordsTotal],
  );

  const finishing = { tenantId, fileId, partnerId: partner.partnerId, format: scan.format };
  let recordsDone = file.records_done;
  // Identical bytes to a file that applied every record: answered from it, not read (0055).
  const sameBytes = options.achSeverityOverrides ? undefined : await findSameBytesFile(pool, { tenantId, fileId }, scan);
  if (sameBytes) {
    const answered = await answerFromSameBytesFile(pool, { tenantId, fileId, format: scan.format }, sameBytes, {
      recordsDone, recordsTotal: scan.recordsTotal, chunkRecordsMax: options.chunkRecordsMax ?? limits.ingest.chunkRecordsMax,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.isStopped ? { isStopped: options.isStopped } : {}),
    });
    if (answered.kind === "fenced") return reportOf(pool, tenantId, fileId);
    if (answered.kind === "complete") {
      ingestFaultPoint("ingest_before_finish");
      await finish(pool, finishing, scan.recordsTotal, sameBytes.contentHash, { everyRecordRepeatsSameBytes: true });
      return reportOf(pool, tenantId, fileId);
    }
    recordsDone = answered.recordsDone;
  }

  const context: ChunkContext = {
    tenantId, fileId, partner, accounts: new Map(),
    suspectWindowHours: options.suspectWindowHours ?? limits.ingest.suspectWindowHours, repeatsExpected: sameBytes !== undefined,
  };
  const calendar = options.achCalendar === undefined ? {} : { achCalendar: options.achCalendar };
  const stream = fileRecords(content, scan.format,
    { tenantId, fileId, ...readOptions, ...calendar });
  const applied = await applyInChunks(pool, context, stream.records, { recordsDone, recordsTotal: scan.recordsTotal, channel: scan.format }, options);
  if (!applied.complete) return reportOf(pool, tenantId, fileId);
  ingestFaultPoint("ingest_before_finish");
  await finish(pool, finishing, applied.lastIndex, stream.contentHash());
  return reportOf(pool, tenantId, fileId);
}

/** A file the validation pass refused: rejected with its findings, and the partner told, in one transaction. */
async function rejectFile(pool: Pool, file: { tenantId: string; fileId: string; partnerId: string; originalName: string }, scan: FileScan): Promise<void> {
  const { tenantId, fileId } = file;
  const rejected = await withTransaction(pool, async (tx) => {
    const updated = await tx.query(
      `UPDATE received_file SET status = 'rejected', format = $3, identity_key = $4,
         findings = $5::jsonb, records_total = $6, finished_at = now(), updated_at = now()
        WHERE tenant_id = $1 AND file_id = $2 AND status = 'processing' AND records_done = 0`,
      [tenantId, fileId, scan.format ?? null, scan.identityKey ?? null, JSON.stringify(scan.findings), scan.recordsTotal],
    );
    if (updated.rowCount !== 1) return false;
    // The partner hears of the refusal in the refusal's transaction (docs/decisions/0025).
    const report = await reportFileRejection(tx, { tenantId, fileId, partnerId: file.partnerId, originalName: file.originalName, findings: scan.findings });
    await noteReportNotSent(tx, file, "rejection report", report);
    return true;
  });
  if (rejected) ingestFilesFinished.inc({ status: "rejected" });
}

/**
 * The file's records in chunks of chunkRecordsMax, each chunk one transaction, skipping the
 * records a previous run committed. Incomplete when a chunk was fenced off (another worker moved
 * the file's progress on); lastIndex is the index of the last record read.
 */
async function applyInChunks(
  pool: Pool, context: ChunkContext, records: AsyncIterable<ReceivedRecord>,
  progress: { recordsDone: number; recordsTotal: number; channel: string }, options: IngestOptions,
): Promise<{ complete: boolean; lastIndex: number }> {
  const chunkRecordsMax = options.chunkRecordsMax ?? limits.ingest.chunkRecordsMax;
  let done = progress.recordsDone;
  const commit = async (chunk: ReceivedRecord[]): Promise<boolean> => {
    await openChunkAccounts(pool, context, chunk);
    const result = await commitChunk(pool, context, chunk, done);
    if (result.kind === "fenced") return false;
    done += chunk.length;
    // A chunk mostly of repeats (a re-upload): the next one reads its keys before claiming (0046).
    context.repeatsExpected = 2 * (result.counts.duplicate + result.counts.conflict) >= chunk.length;
    countChunkRecords(progress.channel, result.counts);
    options.onProgress?.(done, progress.recordsTotal);
    ingestFaultPoint("ingest_chunk_after_commit");
    return true;
  };
  // One chunk commits while the next is read and normalized: the database and the parser work at
  // the same time, and chunks still commit one after the other, in file order.
  let inFlight: Promise<boolean> | undefined;
  const start = (chunk: ReceivedRecord[]) => {
    const running = commit(chunk);
    running.catch(() => undefined);   // awaited below; this only keeps an early failure from being "unhandled"
    inFlight = running;
  };
  let chunk: ReceivedRecord[] = [];
  let lastIndex = 0;
  const stopped = () => options.isStopped?.() === true;
  for await (const record of records) {
    lastIndex = record.index;
    if (record.index <= done) continue;
    chunk.push(record);
    if (chunk.length >= chunkRecordsMax) {
      if (inFlight && !(await inFlight)) return { complete: false, lastIndex };
      if (stopped()) return { complete: false, lastIndex };
      start(chunk);
      chunk = [];
    }
  }
  if (inFlight && !(await inFlight)) return { complete: false, lastIndex };
  if (chunk.length > 0 && stopped()) return { complete: false, lastIndex };
  if (chunk.length > 0 && !(await commit(chunk))) return { complete: false, lastIndex };
  return { complete: true, lastIndex };
}

/** The partner's accounts in each currency of the chunk, opened (and committed) before the chunk's transaction. */
async function openChunkAccounts(
  pool: Pool, context: ChunkContext, chunk: readonly ReceivedRecord[],
): Promise<void> {
  for (const currency of new Set(chunk.flatMap((r) => (r.record ? [r.record.currency] : [])))) {
    if (context.accounts.has(currency) || currency === "XXX") continue;
    const opened = await ensurePartnerAccounts(pool, context.partner, currency);
    if (!opened.ok) throw new Error(`partner accounts in ${currency}: ${opened.error.message}`);
    context.accounts.set(currency, opened.value);
  }
}

/**
 * Marks a file done with its content hash and names the file it corrects (docs/decisions/0011):
 * the latest earlier file with the same file identity, other content and the same class (a file
 * of returns/NOCs or one with forward entries: file-class.ts); else the earlier file,
 * with other content, from which this one repeats the most natural keys (as duplicates or
 * conflicts), when those are at least half of this file's keyed records.
 */
async function finish(
  pool: Pool, file: { tenantId: string; fileId: string; partnerId: string; format: FileFormat }, recordsTotal: number, contentHash: string,
  options: { everyRecordRepeatsSameBytes?: boolean } = {},
): Promise<void> {
  const { tenantId, fileId } = file;
  const finished = await withTransaction(pool, async (tx) => {
    const updated = await tx.query(
      `UPDATE received_file f SET status = 'done', content_hash = $3, records_total = $4,
         finished_at = now(), updated_at = now(),
              correction_of = coalesce(
                (SELECT e.file_id FROM received_file e
                  WHERE e.tenant_id = f.tenant_id AND e.identity_key = f.identity_key AND e.file_id <> f.file_id
                    AND e.status = 'done' AND e.content_hash IS DISTINCT FROM $3 AND e.received_at <= f.received_at
                    -- of the same class: returns/NOCs only, or forward entries (file-class.ts)
                    AND EXISTS (SELECT 1 FROM record_outcome x
                                 WHERE x.tenant_id = e.tenant_id AND x.file_id = e.file_id
                                   AND x.kind <> ALL($6::text[]))
                      = EXISTS (SELECT 1 FROM record_outcome x
                                 WHERE x.tenant_id = f.tenant_id AND x.file_id = f.file_id
                                   AND x.kind <> ALL($6::text[]))
                  ORDER BY e.received_at DESC LIMIT 1),
                (SELECT k.file_id FROM record_outcome o
                   JOIN record_key k ON k.tenant_id = o.tenant_id AND k.natural_key = o.natural_key
                   JOIN received_file e ON e.tenant_id = k.tenant_id AND e.file_id = k.file_id
                  WHERE o.tenant_id = f.tenant_id AND o.file_id = f.file_id AND o.outcome IN ('duplicate', 'conflict')
                    AND k.file_id <> f.file_id AND e.content_hash IS DISTINCT FROM $3
                    -- necessary, and free: a file mostly new (every fresh file) skips both scans
                    AND 2 * (f.duplicate + f.conflict) >= f.records_done - f.rejected
                    -- every record answered from a file with the same bytes (0055): each key's file is that
                    -- file, whose content is this file's, so no row can qualify; the scan is skipped
                    AND NOT $5::boolean
                  GROUP BY k.file_id
                 HAVING 2 * count(*) >= (SELECT count(*) FROM record_outcome c
                                          WHERE c.tenant_id = f.tenant_id AND c.file_id = f.file_id
                                            AND c.natural_key IS NOT NULL)
                  ORDER BY count(*) DESC, k.file_id LIMIT 1))
        WHERE tenant_id = $1 AND file_id = $2 AND status = 'processing' AND records_done = $4
       RETURNING file_id`,
      [
        tenantId, fileId, contentHash, recordsTotal, options.everyRecordRepeatsSameBytes === true,
        answerKinds,
      ],
    );
    if (updated.rowCount !== 1) return false;
    // Told in the transaction that finishes the file; one event per file, for ever.
    const data = await fileEventData(tx, tenantId, fileId);
    await enqueueEvent(tx, { tenantId, eventType: "file.processed", eventKey: `${fileId}:processed`, data });
    // The partner's status report commits with the file's outcome, or neither does (docs/decisions/0025).
    if (file.format === "iso20022") {
      const report = await reportFileStatus(tx, { tenantId, fileId, partnerId: file.partnerId, contentHash, createdAt: new Date() });
      await noteReportNotSent(tx, { tenantId, fileId }, "pacs.002 status report", report);
    }
    return true;
  });
  if (finished) ingestFilesFinished.inc({ status: "done" });
}

async function reportOf(pool: Pool, tenantId: string, fileId: string): Promise<FileReport> {
  const report = await fileReport(pool, tenantId, fileId);
  if (!report) throw new Error(`file ${fileId} vanished`);
  return report;
}

/**
 * Files left `received` or `processing` (their worker died, or the service stopped mid-file):
 * all of them at start, and later those whose heartbeat is older than staleProcessingMs.
 */
export async function unfinishedFiles(pool: Pool, options: { staleAfterMs?: number } = {}): Promise<Array<{ tenantId: string; fileId: string }>> {
  const { rows } = await pool.query<{ tenant_id: string; file_id: string }>(
    `SELECT tenant_id, file_id FROM received_file
      WHERE status IN ('received', 'processing') AND updated_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY received_at LIMIT $2`,
    [options.staleAfterMs ?? 0, limits.ingest.listRowsMax],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, fileId: r.file_id }));
}

export async function resumeUnfinished(pool: Pool, options: IngestOptions & { staleAfterMs?: number; isStopped?: () => boolean } = {}): Promise<FileReport[]> {
  const reports: FileReport[] = [];
  for (const file of await unfinishedFiles(pool, options)) {
    if (options.isStopped?.()) break;
    reports.push(await processFile(pool, file.tenantId, file.fileId, options));
  }
  return reports;
}

/** Files by status and the age of the oldest unfinished one, for the gauges. */
export async function refreshIngestGauges(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ status: string; files: bigint; oldest_seconds: string | null }>(
    `SELECT status, count(*) AS files,
            extract(epoch FROM now() - min(received_at))::text AS oldest_seconds
       FROM received_file
      GROUP BY status`);
  let oldest = 0;
  for (const status of ["received", "processing", "done", "rejected"]) {
    const row = rows.find((r) => r.status === status);
    ingestFilesByStatus.set({ status }, Number(row?.files ?? 0n));
    if ((status === "received" || status === "processing") && row?.oldest_seconds) oldest = Math.max(oldest, Number(row.oldest_seconds));
  }
  ingestOldestProcessingAge.set(oldest);
}

