import {
  keyStatesByLinkId, outcomesOfFile, recordsDroppedByCorrection, rejectedRecordsOfFile,
  type KeyState,
} from "../records/index.ts";
import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import { currentCode } from "../errors/catalog.ts";
import type { Queryable } from "../db/pool.ts";
import {
  instantOfMicrosSql, microsOfSql, pageOf, rowsToAsk, type ListPage, type ListPlace,
} from "../db/list-place.ts";
import type { Finding } from "../errors/finding.ts";
import { settlementDatesOf } from "../ledger/index.ts";
import { partnerNamesOf } from "../partners/partners.ts";
import { zeroCounts, type Outcome, type OutcomeCounts } from "./chunk.ts";

/** A finding as a report shows it: where (line or xml_path), which field, the code and the message. */
export interface ReportedFinding {
  line?: number;
  xml_path?: string;
  field?: string;
  code: string;
  message: string;
}

/** The per-file summary `clearline ingest --json` prints and the HTTP API returns. */
export interface FileReport {
  file_id: string;
  name: string;
  format: string | null;
  status: "received" | "processing" | "done" | "rejected";
  records: number;
  outcomes: OutcomeCounts;
  errors: ReportedFinding[];
  warnings: ReportedFinding[];
  partner: string;
  source: string;
  size_bytes: number;
  received_at: string;
  identity: string | null;
  correction_of: string | null;
  /** The earlier file with the same bytes whose records answered this file's (docs/decisions/0055). */
  same_bytes_as: string | null;
  /** Its records repeating a version a person already decided on (0099): among the duplicates. */
  repeats_decided: number;
  /** A correction's report (not a listing's): what the file it corrects applied and it leaves out. */
  dropped_records?: DroppedRecords | null;
}

/** "N records repeat versions already decided", or nothing when none does. */
export function repeatsDecidedNote(
  report: Pick<FileReport, "repeats_decided">,
): string | undefined {
  const n = report.repeats_decided;
  if (n === 0) return undefined;
  const what = n === 1 ? "1 record repeats a version" : `${n} records repeat versions`;
  return `${what} already decided: nothing posted, no review item`;
}

export const droppedRecordsNote = "in the original, absent from the correction: not reversed automatically";

/** Records the corrected file applied that the correction leaves out (docs/decisions/0011): listed, never reversed. */
export interface DroppedRecords {
  note: typeof droppedRecordsNote;
  original_file_id: string;
  count: number;
  records: DroppedRecord[];   // the first showRecordsMax, in the original's order
}

export interface DroppedRecord {
  index: number;
  position: string;
  natural_key: string;
  kind: string | null;
  amount_minor: string;
  currency: string;
  transfer_key: string | null;
}

interface FileRow {
  file_id: string;
  original_name: string;
  format: string | null;
  status: FileReport["status"];
  records_total: number | null;
  records_done: number;
  applied: number;
  duplicate: number;
  conflict: number;
  suspect: number;
  rejected: number;
  orphan: number;
  findings: Finding[];
  partner_id: string;
  source: string;
  size_bytes: bigint;
  received_at: Date;
  identity_key: string | null;
  correction_of: string | null;
  same_bytes_as: string | null;
  repeats_decided: number;
}

const FILE_COLUMNS = `f.file_id, f.original_name, f.format, f.status, f.records_total, f.records_done, f.applied, f.duplicate, f.conflict,
  f.suspect, f.rejected, f.orphan, f.findings, f.partner_id, f.source, f.size_bytes, f.received_at,
  f.identity_key, f.correction_of, f.same_bytes_as, f.repeats_decided`;

function reported(found: Finding): ReportedFinding {
  // A finding stored before its code was renamed reads as the code's name now (decision 0068).
  const out: ReportedFinding = { code: currentCode(found.code), message: found.message };
  if (found.position.line !== undefined) out.line = found.position.line;
  if (found.position.xmlPath !== undefined) out.xml_path = found.position.xmlPath;
  if (found.position.field !== undefined) out.field = found.position.field;
  return out;
}

/** "line 12" -> { line: 12 }; an XML path stays one: { xml_path }. */
export function positionOf(position: string): { line: number } | { xml_path: string } {
  const line = /^line (\d+)$/.exec(position);
  return line ? { line: Number(line[1]) } : { xml_path: position };
}

/** Each row's partner by name, from the partners' registry (a file's partner always exists). */
async function partnersOf(
  db: Queryable, tenantId: string, rows: readonly FileRow[],
): Promise<(row: FileRow) => string> {
  const names = await partnerNamesOf(db, tenantId, rows.map((row) => row.partner_id));
  return (row) => {
    const name = names.get(row.partner_id);
    assert(name !== undefined, `file ${row.file_id} names partner ${row.partner_id}, which exists`);
    return name;
  };
}

function reportFromRow(row: FileRow, partner: string, recordErrors: ReportedFinding[]): FileReport {
  const outcomes: OutcomeCounts = zeroCounts();
  for (const name of Object.keys(outcomes) as Outcome[]) outcomes[name] = row[name];
  return {
    file_id: row.file_id,
    name: row.original_name,
    format: row.format,
    status: row.status,
    records: row.records_total ?? row.records_done,
    outcomes,
    errors: [...row.findings.filter((f) => f.severity === "error").map(reported), ...recordErrors].slice(0, limits.ingest.findingsMax),
    warnings: row.findings.filter((f) => f.severity === "warning").map(reported),
    partner,
    source: row.source,
    size_bytes: Number(row.size_bytes),
    received_at: row.received_at.toISOString(),
    identity: row.identity_key,
    correction_of: row.correction_of,
    same_bytes_as: row.same_bytes_as,
    repeats_decided: row.repeats_decided,
  };
}

/**
 * A file as listed and as told (docs/decisions/0107): the items of GET /v1/files and of
 * `clearline files --json`, and the data of the file.processed event. A report (GET
 * /v1/files/{id}, `clearline file show --json`) is this and, for a file, its dropped records.
 */
export type FileView = Omit<FileReport, "dropped_records">;

/**
 * The file.processed event's data, read in the transaction that finishes the file: the file as
 * listed, its errors and warnings each cut at limits.outbox.eventFindingsMax.
 */
export async function fileEventData(
  db: Queryable, tenantId: string, fileId: string,
): Promise<FileView> {
  const report = await fileSummary(db, tenantId, fileId);
  assert(report !== undefined, `file ${fileId} being finished exists`);
  const findingsMax = limits.outbox.eventFindingsMax;
  return {
    ...report, errors: report.errors.slice(0, findingsMax),
    warnings: report.warnings.slice(0, findingsMax),
  };
}

async function fileSummary(
  db: Queryable, tenantId: string, fileId: string,
): Promise<FileView | undefined> {
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS}
       FROM received_file f
      WHERE f.tenant_id = $1 AND f.file_id = $2`, [tenantId, fileId]);
  const row = rows[0];
  if (!row) return undefined;
  const partnerOf = await partnersOf(db, tenantId, [row]);
  const rejected = row.rejected > 0
    ? await rejectedRecordsOfFile(db, tenantId, fileId, limits.ingest.findingsMax)
    : [];
  const recordErrors = rejected.map((r) => ({
    ...positionOf(r.position), ...(r.field ? { field: r.field } : {}), code: r.code,
    message: r.detail ?? r.code,
  }));
  return reportFromRow(row, partnerOf(row), recordErrors);
}

export async function fileReport(db: Queryable, tenantId: string, fileId: string): Promise<FileReport | undefined> {
  const report: FileReport | undefined = await fileSummary(db, tenantId, fileId);
  if (!report) return undefined;
  const original = report.status === "done" ? report.correction_of : null;
  report.dropped_records = original ? await droppedRecords(db, tenantId, original, fileId) : null;
  return report;
}

/**
 * What the original applied and the correction leaves out: neither its natural key nor its
 * content under another key (a suspect the correction holds against it) is in the correction.
 */
export async function droppedRecords(db: Queryable, tenantId: string, originalFileId: string, correctionFileId: string): Promise<DroppedRecords> {
  const rows = await recordsDroppedByCorrection(
    db, tenantId, originalFileId, correctionFileId, limits.ingest.showRecordsMax);
  return {
    note: droppedRecordsNote, original_file_id: originalFileId, count: Number(rows[0]?.total ?? 0n),
    records: rows.map(({ total: _total, ...r }) => ({ ...r, amount_minor: BigInt(r.amount_minor).toString() })),
  };
}

/**
 * The tenants that received a file with this id: one, none, or (ids are per tenant) several, of
 * which two are read, enough for the caller to ask which.
 */
export async function tenantsOfFile(db: Queryable, fileId: string): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    "SELECT tenant_id FROM received_file WHERE file_id = $1 LIMIT 2", [fileId]);
  return rows.map((r) => r.tenant_id);
}

/** Every tenant that has received a file, by id. */
export async function tenantsWithFiles(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    "SELECT DISTINCT tenant_id FROM received_file ORDER BY tenant_id");
  return rows.map((r) => r.tenant_id);
}

export async function listFiles(db: Queryable, tenantId: string, options: { status?: string; limit?: number } = {}): Promise<FileView[]> {
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS}
       FROM received_file f
      WHERE f.tenant_id = $1 AND ($2::text IS NULL OR f.status = $2)
      ORDER BY f.received_at DESC, f.file_id
      LIMIT $3`,
    [tenantId, options.status ?? null, Math.min(options.limit ?? limits.ingest.listRowsMax, limits.ingest.listRowsMax)]);
  const partnerOf = await partnersOf(db, tenantId, rows);
  return rows.map((row) => reportFromRow(row, partnerOf(row), []));
}

/** What a page of the tenant's files is filtered by (GET /v1/files). */
export interface FilePageQuery {
  after?: ListPlace | undefined;
  status?: FileReport["status"] | undefined;
  partnerId?: string | undefined;
  source?: string | undefined;
  receivedFrom?: string | undefined;     // an instant, inclusive
  receivedBefore?: string | undefined;   // an instant, exclusive
  limit: number;
}

/**
 * A page of the tenant's files as listed (the report without its correction's dropped records),
 * the oldest first by receipt time and then id (the index of migration 0038), after a place.
 */
export async function filesPage(
  db: Queryable, tenantId: string, query: FilePageQuery,
): Promise<ListPage<FileReport>> {
  const { rows } = await db.query<FileRow & { place: string }>(
    `SELECT ${FILE_COLUMNS}, ${microsOfSql("f.received_at")} AS place
       FROM received_file f
      WHERE f.tenant_id = $1
        AND ($2::text IS NULL OR (f.received_at, f.file_id) > (${instantOfMicrosSql("$2")}, $3))
        AND ($4::text IS NULL OR f.status = $4)
        AND ($5::text IS NULL OR f.partner_id = $5)
        AND ($6::text IS NULL OR f.source = $6)
        AND ($7::timestamptz IS NULL OR f.received_at >= $7)
        AND ($8::timestamptz IS NULL OR f.received_at < $8)
      ORDER BY f.received_at, f.file_id
      LIMIT $9`,
    [tenantId, query.after?.position ?? null, query.after?.id ?? null, query.status ?? null,
      query.partnerId ?? null, query.source ?? null, query.receivedFrom ?? null,
      query.receivedBefore ?? null, rowsToAsk(query.limit)]);
  const partnerOf = await partnersOf(db, tenantId, rows);
  return pageOf(rows, query.limit, (row) => reportFromRow(row, partnerOf(row), []),
    (row) => ({ position: row.place, id: row.file_id }));
}

/** Whether the tenant received a file with this id. */
export async function fileExists(
  db: Queryable, tenantId: string, fileId: string,
): Promise<boolean> {
  const { rows } = await db.query(
    "SELECT 1 FROM received_file WHERE tenant_id = $1 AND file_id = $2", [tenantId, fileId]);
  return rows.length > 0;
}

export interface ReportedOutcome {
  index: number;
  position: string;
  natural_key: string | null;
  outcome: Outcome;
  code: string | null;
  field: string | null;
  detail: string | null;
  kind: string | null;
  amount_minor: string | null;
  currency: string | null;
  original_ref: string | null;
  transfer_key: string | null;
  /** The transfer's settlement date (docs/decisions/0101); null when nothing was posted. */
  settlement_date: string | null;
}

/** Per-record outcomes of a file, in file order, with their positions. */
export async function fileOutcomes(
  db: Queryable, tenantId: string, fileId: string, limit: number = limits.ingest.showRecordsMax,
): Promise<ReportedOutcome[]> {
  const rowsMax = Math.min(limit, limits.ingest.showRecordsMax);
  const rows = await outcomesOfFile(db, tenantId, fileId, rowsMax);
  const keys = rows.flatMap((r) => (r.transfer_key === null ? [] : [r.transfer_key]));
  const settles = await settlementDatesOf(db, tenantId, keys);
  return rows.map((r) => ({
    ...r, amount_minor: r.amount_minor === null ? null : r.amount_minor.toString(),
    settlement_date: r.transfer_key === null ? null : settles.get(r.transfer_key) ?? null,
  }));
}

export interface PaymentState {
  linkId: string;
  naturalKey: string;
  state: KeyState;
  code: string | null;
  detail: string | null;
}

/**
 * The state of the payments a partner names by reference ("e2e:<EndToEndId>", "uetr:<UETR>"), for a
 * status request: per id the most recent record carrying it, with the code and detail of its outcome.
 */
export async function paymentStatesByLinkId(db: Queryable, tenantId: string, linkIds: readonly string[]): Promise<Map<string, PaymentState>> {
  if (linkIds.length === 0) return new Map();
  const rows = await keyStatesByLinkId(db, tenantId, [...new Set(linkIds)]);
  return new Map(rows.map((r) => [r.link_id, { linkId: r.link_id, naturalKey: r.natural_key, state: r.state, code: r.code, detail: r.detail }]));
}
