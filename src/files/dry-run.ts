import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { openTransaction, type Tx } from "../db/transaction.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import {
  appliedRecordsOfFilePage, fileHoldsForwardRecord, previewRecords, recordOutcomeOf, storedKeysOf,
  type Preview, type RecordOutcome,
} from "../records/index.ts";
import type { FileFormat } from "../protocols/detect-format.ts";
import { answerKinds, isForwardKind } from "./file-class.ts";
import { fileRecords, scanFile, type ContentSource } from "./file-reader.ts";
import { droppedRecordsNote, positionOf, type DroppedRecord, type DroppedRecords, type ReportedFinding } from "./report.ts";

export type DryRunVerdict = "new" | "already_applied" | "changed" | "suspect" | "rejected";

export interface DryRunReport {
  name: string;
  format: string | null;
  status: "would_apply" | "would_reject";
  records: number;
  verdicts: Record<DryRunVerdict, number>;
  errors: ReportedFinding[];
  /** amount_minor: this file's; original_amount_minor: what the key holds now, for a changed record (shown side by side). */
  records_listed: Array<{ index: number; position: string; natural_key: string | null; verdict: DryRunVerdict; detail?: string; amount_minor?: string; currency?: string; original_amount_minor?: string }>;
  /** The file this one would correct (docs/decisions/0011), and what that file applied that this one leaves out. */
  correction_of: string | null;
  dropped_records: DroppedRecords | null;
  /** The file had more records than limits.ingest.dropCheckRecordsMax: dropped records were not looked for. */
  dropped_records_not_checked: boolean;
}

/** What the dry run learns of the file, beyond the verdicts, to find the file it corrects. */
interface CorrectionEvidence {
  keys: Set<string>;                       // every natural key of the file
  newFingerprints: Set<string>;            // content of its new keys (a suspect's match is not dropped)
  repeatsByFile: Map<string, number>;      // known keys, counted by the file that first applied them
  keyed: number;
  overflow: boolean;
  holdsForward: boolean;                   // a record of a forward kind (file-class.ts)
}

/** The file id the preview's claims carry: its own records relate to each other as one file's do. */
const PREVIEW_FILE_ID = "dry-run";

/**
 * What ingesting a file would do, without storing or posting anything. The record core's own
 * stages decide each record (src/records previewRecords: rules, claims, repeats, payment legs,
 * identities, suspects) in one transaction that is rolled back: new, already applied (its key is
 * known with the same content, or another channel brought the same payment), changed (a
 * conflict), suspect (held for a person), or rejected. A structurally broken file would be rejected
 * whole. A file that would correct an earlier one names the records that one applied and this one
 * leaves out. While it runs, an ingest of the same keys waits for it (its claims are uncommitted).
 */
export async function dryRun(pool: Pool, tenantId: string, content: ContentSource, options: { name: string; format?: FileFormat }): Promise<DryRunReport> {
  const preview = await openTransaction(pool);
  try {
    return await dryRunIn(preview.tx, tenantId, content, options);
  } finally {
    await preview.rollback();
  }
}

async function dryRunIn(db: Tx, tenantId: string, content: ContentSource, options: { name: string; format?: FileFormat }): Promise<DryRunReport> {
  const scan = await scanFile(content, { fileName: options.name, ...(options.format ? { format: options.format } : {}) });
  const report: DryRunReport = {
    name: options.name, format: scan.format ?? null, status: scan.rejected ? "would_reject" : "would_apply", records: scan.recordsTotal,
    verdicts: { new: 0, already_applied: 0, changed: 0, suspect: 0, rejected: 0 },
    errors: scan.findings.filter((f) => f.severity === "error").map((f) => ({ ...(f.position.line !== undefined ? { line: f.position.line } : {}), ...(f.position.xmlPath !== undefined ? { xml_path: f.position.xmlPath } : {}), ...(f.position.field !== undefined ? { field: f.position.field } : {}), code: f.code, message: f.message })),
    records_listed: [], correction_of: null, dropped_records: null, dropped_records_not_checked: false,
  };
  if (scan.rejected || !scan.format) return report;
  const evidence: CorrectionEvidence = {
    keys: new Set(), newFingerprints: new Set(), repeatsByFile: new Map(), keyed: 0,
    overflow: false, holdsForward: false,
  };
  let chunk: ReceivedRecord[] = [];
  const stream = fileRecords(content, scan.format, { tenantId, fileId: "dry-run", fileName: options.name });
  for await (const record of stream.records) {
    chunk.push(record);
    if (chunk.length >= limits.ingest.chunkRecordsMax) {
      await classify(db, tenantId, chunk, report, evidence);
      chunk = [];
    }
  }
  if (chunk.length > 0) await classify(db, tenantId, chunk, report, evidence);
  report.correction_of = await correctedFile(db, tenantId, scan.identityKey, stream.contentHash(), evidence);
  if (report.correction_of && evidence.overflow) report.dropped_records_not_checked = true;
  else if (report.correction_of) report.dropped_records = await droppedFrom(db, tenantId, report.correction_of, evidence);
  return report;
}

/** The outcome ingesting would store; undefined: the record would be posted or recorded. */
function storedOutcomeOf(preview: Preview): RecordOutcome | undefined {
  return preview.outcome === undefined ? undefined : recordOutcomeOf(preview.outcome);
}

function verdictOf(preview: Preview): DryRunVerdict {
  const outcome = storedOutcomeOf(preview);
  if (!preview.record || outcome === "rejected") return "rejected";
  if (outcome === "duplicate") return "already_applied";
  if (outcome === "conflict") return "changed";
  if (outcome === "suspect") return "suspect";
  return "new";   // would be posted or recorded (or linked as a later leg)
}

async function classify(
  db: Tx, tenantId: string, chunk: ReceivedRecord[], report: DryRunReport,
  evidence: CorrectionEvidence,
): Promise<void> {
  const decisions = await previewRecords(db, {
    tenantId, suspectWindowHours: limits.ingest.suspectWindowHours,
    arrival: { kind: "file", fileId: PREVIEW_FILE_ID, partnerId: "", accounts: new Map() },
  }, chunk);
  const repeated = decisions.flatMap((d) => {
    const outcome = storedOutcomeOf(d);
    const repeat = outcome === "duplicate" || outcome === "conflict";
    return d.record && repeat ? [d.record.naturalKey] : [];
  });
  const known = await storedKeysOf(db, tenantId, repeated);
  for (const decision of decisions) {
    const item = decision.item;
    const verdict = verdictOf(decision);
    const rejection = decision.record ? undefined : item.rejection;
    const detail = rejection ? `${rejection.code}: ${rejection.message}` : decision.outcome?.detail;
    if (!decision.record && item.rejection) report.errors.push({ ...positionOf(item.position), ...(item.rejection.position.field ? { field: item.rejection.position.field } : {}), code: item.rejection.code, message: item.rejection.message });
    const first = decision.record ? known.get(decision.record.naturalKey) : undefined;
    if (decision.record) noteEvidence(evidence, decision.record.naturalKey, decision.record.fingerprint, verdict, first?.file_id ?? undefined);
    if (decision.record && isForwardKind(decision.record.kind)) evidence.holdsForward = true;
    report.verdicts[verdict]++;
    if (report.records_listed.length < limits.ingest.showRecordsMax) {
      const amounts = decision.record ? { amount_minor: decision.record.amount.toString(), currency: decision.record.currency } : {};
      const original = verdict === "changed" && first !== undefined ? BigInt(first.amount_minor).toString() : undefined;
      report.records_listed.push({ index: item.index, position: item.position, natural_key: decision.record?.naturalKey ?? null, verdict, ...(detail ? { detail } : {}), ...amounts, ...(original !== undefined ? { original_amount_minor: original } : {}) });
    }
  }
}

function noteEvidence(evidence: CorrectionEvidence, naturalKey: string, fingerprint: string, verdict: DryRunVerdict, firstFileId: string | undefined): void {
  evidence.keyed++;
  if (firstFileId !== undefined) evidence.repeatsByFile.set(firstFileId, (evidence.repeatsByFile.get(firstFileId) ?? 0) + 1);
  if (evidence.keys.size >= limits.ingest.dropCheckRecordsMax) {
    evidence.overflow = true;
    return;
  }
  evidence.keys.add(naturalKey);
  if (verdict === "new") evidence.newFingerprints.add(fingerprint);
}

/**
 * The file this one would correct, by the rule ingestion applies when it finishes a file
 * (src/files/pipeline.ts): the latest finished file with the same identity, other content and
 * the same class (file-class.ts: returns/NOCs only, or forward entries);
 * else the file with other content whose keys this one repeats most, if at least half of its own.
 */
async function correctedFile(db: Queryable, tenantId: string, identityKey: string | undefined, contentHash: string, evidence: CorrectionEvidence): Promise<string | null> {
  if (identityKey !== undefined) {
    const sameIdentity = await sameIdentityFileOfClass(
      db, tenantId, identityKey, contentHash, evidence.holdsForward);
    if (sameIdentity !== undefined) return sameIdentity;
  }
  const candidates = [...evidence.repeatsByFile].filter(([, repeats]) => 2 * repeats >= evidence.keyed)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  for (const [fileId] of candidates) {
    const { rows } = await db.query(
      `SELECT 1 FROM received_file WHERE tenant_id = $1 AND file_id = $2
         AND content_hash IS DISTINCT FROM $3`,
      [tenantId, fileId, contentHash]);
    if ((rows.length) > 0) return fileId;
  }
  return null;
}

/**
 * The latest finished file with this identity and other content whose class (forward entries, or
 * returns/NOCs only) is this file's, read newest first one at a time: files re-sent under one
 * header are few, and the first of the right class ends the search.
 */
async function sameIdentityFileOfClass(
  db: Queryable, tenantId: string, identityKey: string, contentHash: string,
  holdsForward: boolean,
): Promise<string | undefined> {
  let before: { receivedAt: Date; fileId: string } | undefined;
  for (;;) {
    const { rows } = await db.query<{ file_id: string; received_at: Date }>(
      `SELECT file_id, received_at FROM received_file
        WHERE tenant_id = $1 AND identity_key = $2 AND status = 'done'
          AND content_hash IS DISTINCT FROM $3
          AND ($4::timestamptz IS NULL OR (received_at, file_id) < ($4, $5))
        ORDER BY received_at DESC, file_id DESC LIMIT 1`,
      [tenantId, identityKey, contentHash, before?.receivedAt ?? null, before?.fileId ?? null]);
    const candidate = rows[0];
    if (candidate === undefined) return undefined;
    const forward = await fileHoldsForwardRecord(db, tenantId, candidate.file_id, answerKinds);
    if (forward === holdsForward) return candidate.file_id;
    before = { receivedAt: candidate.received_at, fileId: candidate.file_id };
  }
}

/** The original's applied records, page by page, that the file read leaves out (by key, and by content under a new key). */
async function droppedFrom(db: Queryable, tenantId: string, originalFileId: string, evidence: CorrectionEvidence): Promise<DroppedRecords> {
  const dropped: DroppedRecord[] = [];
  let count = 0;
  for (let after = 0; ;) {
    const rows = await appliedRecordsOfFilePage(
      db, tenantId, originalFileId, after, limits.ingest.chunkRecordsMax);
    for (const { fingerprint, ...row } of rows) {
      if (evidence.keys.has(row.natural_key) || (fingerprint !== null && evidence.newFingerprints.has(fingerprint))) continue;
      count++;
      if (dropped.length < limits.ingest.showRecordsMax) dropped.push({ ...row, amount_minor: BigInt(row.amount_minor).toString() });
    }
    if (rows.length < limits.ingest.chunkRecordsMax) break;
    after = rows[rows.length - 1]?.index ?? after;
  }
  return { note: droppedRecordsNote, original_file_id: originalFileId, count, records: dropped };
}
