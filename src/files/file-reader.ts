import { createHash } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Finding } from "../errors/finding.ts";
import { AchContentHash, achFileIdentity } from "../normalize/from-ach.ts";
import {
  achReceivedRecord, isoReceivedRecord, type ReceivedRecord,
} from "../normalize/received-record.ts";
import { readAch, validateAch } from "../protocols/ach/reader.ts";
import type { AchRecord, SeverityOverrides } from "../protocols/ach/types.ts";
import type { BusinessCalendar } from "../protocols/calendars/index.ts";
import { detectFormat, type FileFormat } from "../protocols/detect-format.ts";
import { readIso20022 } from "../protocols/iso20022/index.ts";
import type { Iso20022Header, Iso20022Transaction } from "../protocols/iso20022/types.ts";
import { normalizeIso20022Transaction } from "../normalize/from-iso20022.ts";
import { settlementDayFinding } from "../normalize/settlement-day-finding.ts";

/** Opens the file's content again from the start: each pass reads it as a stream. */
export type ContentSource = () => AsyncIterable<Uint8Array>;

/**
 * What the validation pass learned, without keeping any record: the format, the file's own
 * identity, the file-scope findings and whether the file is structurally broken. A broken file
 * applies nothing, so no record is posted before this pass has read the whole file.
 */
export interface FileScan {
  format?: FileFormat;
  identityKey?: string;
  rejected: boolean;
  findings: Finding[];          // file-scope (and batch-scope) errors and warnings, bounded
  findingsDropped: number;
  recordsTotal: number;
  recordsRejected: number;      // records the reader refuses (entry- or transaction-scope errors): rejected one by one in the second pass
}

async function firstBytes(content: ContentSource): Promise<Uint8Array> {
  for await (const chunk of content()) if (chunk.byteLength > 0) return chunk.subarray(0, 64);
  return new Uint8Array();
}

function keep(scan: FileScan, found: Finding): void {
  if (scan.findings.length < limits.ingest.findingsMax) scan.findings.push(found);
  else scan.findingsDropped++;
}

export async function scanFile(content: ContentSource, options: { format?: FileFormat; fileName?: string; achSeverityOverrides?: SeverityOverrides } = {}): Promise<FileScan> {
  const head = await firstBytes(content);
  const format = options.format ?? detectFormat(head);
  const scan: FileScan = { rejected: false, findings: [], findingsDropped: 0, recordsTotal: 0, recordsRejected: 0 };
  if (head.byteLength === 0) {
    keep(scan, { code: "INPUT_EMPTY", severity: "error", message: "the file is empty", position: {} });
    return { ...scan, rejected: true };
  }
  if (!format) {
    keep(scan, { code: "FORMAT_UNKNOWN", severity: "error", message: "the file is neither a NACHA ACH file nor an ISO 20022 XML document", position: { byteOffset: 0 } });
    return { ...scan, rejected: true };
  }
  scan.format = format;
  return format === "ach" ? scanAch(content, scan, options) : scanIso20022(content, scan, options);
}

/**
 * ACH: a file-scope or batch-scope error (control totals, counts, record order, trace order)
 * rejects the whole file (docs/decisions/0010: a structurally broken file applies nothing); an
 * entry-scope error rejects that entry only, in the second pass.
 */
async function scanAch(content: ContentSource, scan: FileScan, options: { fileName?: string; achSeverityOverrides?: SeverityOverrides }): Promise<FileScan> {
  const summary = await validateAch(content(), { ...(options.fileName ? { fileName: options.fileName } : {}), ...(options.achSeverityOverrides ? { severityOverrides: options.achSeverityOverrides } : {}) });
  if (summary.fileHeader) scan.identityKey = achFileIdentity(summary.fileHeader).key;
  // Entry-scope errors reject their entry (reported with its outcome); entry-scope warnings are
  // kept here, so `ingest` reports every warning `inspect` reports for the same file.
  for (const found of summary.findings) if (found.scope !== "entry" || found.severity === "warning") keep(scan, found);
  scan.findingsDropped += summary.findingsDropped;
  scan.rejected = summary.fileRejected || summary.rejectedBatchCount > 0;
  scan.recordsTotal = summary.entryCount;
  scan.recordsRejected = summary.rejectedEntryCount;
  return scan;
}

function isoIdentity(header: Iso20022Header): string {
  const values = header.values;
  const messageId = values["MsgId"] ?? values["AssgnmtId"] ?? header.appHeader?.values["BizMsgIdr"] ?? "";
  const sender = values["InstgAgtBIC"] ?? values["InstgAgtMmbId"] ?? values["AssgnrBIC"] ?? values["AssgnrMmbId"]
    ?? header.appHeader?.values["FrBIC"] ?? header.appHeader?.values["FrMmbId"] ?? values["InitgPtyOrgId"] ?? values["InitgPtyNm"] ?? "";
  return ["iso20022", header.message.family, messageId, sender].join(":");
}

/** ISO 20022: a file-scope error (NbOfTxs, CtrlSum, bad XML) rejects the file; a transaction's own error that transaction only. */
async function scanIso20022(content: ContentSource, scan: FileScan, options: { fileName?: string }): Promise<FileScan> {
  let header: Iso20022Header | undefined;
  for await (const event of readIso20022(content(), options.fileName ? { fileName: options.fileName } : {})) {
    if (event.type === "header") {
      header = event.header;
      scan.identityKey = isoIdentity(event.header);
    } else if (event.type === "transaction") {
      scan.recordsTotal++;
      if (event.transaction.findings.some((found) => found.severity === "error")) scan.recordsRejected++;
      for (const found of event.transaction.findings) if (found.severity === "warning") keep(scan, found);
      const closed = header && closedSettlementDay(header, event.transaction);
      if (closed) keep(scan, closed);
    }
    else if (event.type === "finding") {
      keep(scan, event.finding);
      if (event.finding.severity === "error" && event.finding.scope === "file") scan.rejected = true;
    } else if (event.type === "end") {
      scan.findingsDropped += event.summary.findingsDropped;
      if (event.summary.fileErrorCount > 0 || !event.summary.complete) scan.rejected = true;
    }
  }
  return scan;
}

/**
 * The warning `inspect` gives a transaction settling on a day its currency's clearing system is
 * closed (a TARGET2 closing day for EUR), so that ingestion reports it too (issue 30). Read from
 * the record the normalizer makes of it; a transaction it refuses is reported as refused.
 */
function closedSettlementDay(
  header: Iso20022Header, transaction: Iso20022Transaction,
): Finding | undefined {
  if (transaction.findings.some((found) => found.severity === "error")) return undefined;
  const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: "" });
  return normalized.ok ? settlementDayFinding(normalized.value, transaction.xmlPath) : undefined;
}

export interface RecordStream {
  records: AsyncGenerator<ReceivedRecord>;
  /** Hash of the normalized content (identity, then each record's key and fingerprint); valid once `records` is exhausted. */
  contentHash(): string;
}

/** The second pass: every record of a file that passed the scan, in file order. */
export function fileRecords(
  content: ContentSource, format: FileFormat,
  context: {
    tenantId: string; fileId: string; fileName?: string; achSeverityOverrides?: SeverityOverrides;
    achCalendar?: BusinessCalendar;   // the partner's (docs/decisions/0101)
  },
): RecordStream {
  let digest = "";
  async function* ach(): AsyncGenerator<ReceivedRecord> {
    let hash = new AchContentHash();
    let fileHeader: AchRecord | undefined;
    let index = 0;
    const options = { ...(context.fileName ? { fileName: context.fileName } : {}), ...(context.achSeverityOverrides ? { severityOverrides: context.achSeverityOverrides } : {}) };
    for await (const event of readAch(content(), options)) {
      if (event.type === "fileHeader") {
        fileHeader = event.record;
        hash = new AchContentHash(achFileIdentity(event.record));
      } else if (event.type === "entry") {
        const file = {
          tenantId: context.tenantId, fileId: context.fileId,
          ...(context.achCalendar === undefined ? {} : { calendar: context.achCalendar }),
        };
        const withHeader = fileHeader ? { ...file, fileHeader } : file;
        const record = achReceivedRecord(event.entry, ++index, withHeader);
        if (record.record) hash.add(record.record);
        yield record;
      }
    }
    digest = hash.digest();
  }
  async function* iso(): AsyncGenerator<ReceivedRecord> {
    const hash = createHash("sha256");
    let header: Iso20022Header | undefined;
    let index = 0;
    for await (const event of readIso20022(content(), context.fileName ? { fileName: context.fileName } : {})) {
      if (event.type === "header") {
        header = event.header;
        hash.update(`identity\u0000${isoIdentity(header)}\u0001`);
      } else if (event.type === "transaction" && header) {
        const file = { tenantId: context.tenantId, fileId: context.fileId };
        const record = isoReceivedRecord(header, event.transaction, ++index, file);
        if (record.record) hash.update(`${record.record.naturalKey}\u0000${record.record.fingerprint}\u0001`);
        yield record;
      }
    }
    digest = hash.digest("hex");
  }
  return { records: format === "ach" ? ach() : iso(), contentHash: () => digest };
}
