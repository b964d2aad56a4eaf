import type { ErrorCode } from "../../errors/catalog.ts";
import type { Finding, Severity } from "../../errors/finding.ts";
import type { RecordFields } from "./fixed-width.ts";

export type AchRecordKind = "fileHeader" | "batchHeader" | "entryDetail" | "addenda" | "batchControl" | "fileControl";

/** One decoded NACHA record: its layout (from protocols/nacha) and the raw text of each field. */
export interface AchRecord {
  kind: AchRecordKind;
  layout: string;         // layout name, e.g. "entry-detail-ctx", "addenda-99-dishonored"
  line: number;           // 1-based physical line
  fields: RecordFields;   // untrimmed, exactly as in the file
}

/**
 * What a finding puts at stake: "file" rejects the whole file (structure, file control), "batch"
 * the batch (header/control disagreement, trace order), "entry" only that entry and its addenda.
 */
export type AchFindingScope = "file" | "batch" | "entry";

export interface AchFinding extends Finding {
  scope: AchFindingScope;
  batchOrdinal?: number;  // 1-based count of batch headers, when the finding belongs to a batch
}

/** Per-partner configuration: a code's severity changed, or the rule switched off ("ignore"). */
export type SeverityOverrides = Partial<Record<ErrorCode, Severity | "ignore">>;

export interface AchEntry {
  batchOrdinal: number;
  record: AchRecord;              // the entry detail record (6)
  addenda: AchRecord[];           // its addenda (7), in file order
  batchHeader: AchRecord;         // the header of its batch (shared, not copied)
  findings: AchFinding[];         // entry-scope findings about this entry and its addenda (bounded)
  rejected: boolean;              // an entry-scope error: reject this record, not the file
}

export interface AchSummary {
  fileHeader?: AchRecord;
  fileControl?: AchRecord;
  findings: AchFinding[];         // every scope, up to findingsMax
  findingsDropped: number;
  errorCount: number;
  warningCount: number;
  fileRejected: boolean;          // a file-scope error: the whole file must be refused
  rejectedBatchCount: number;
  rejectedEntryCount: number;
  lineCount: number;
  recordCount: number;            // non-blank records, padding included
  batchCount: number;
  entryCount: number;
  addendaCount: number;
  totalDebitMinor: bigint;        // computed from the entries, not read from the controls
  totalCreditMinor: bigint;
}

export type AchEvent =
  | { type: "fileHeader"; record: AchRecord }
  | { type: "batchHeader"; record: AchRecord; batchOrdinal: number }
  | { type: "entry"; entry: AchEntry }
  | { type: "batchControl"; record: AchRecord | undefined; batchOrdinal: number; batchRejected: boolean; findings: AchFinding[] }
  | { type: "fileControl"; record: AchRecord }
  | { type: "end"; summary: AchSummary };

export interface AchReadOptions {
  fileName?: string;
  severityOverrides?: SeverityOverrides;
  limits?: Partial<AchReadLimits>;
}

export interface AchReadLimits {
  fileBytesMax: number;
  lineBytesMax: number;
  findingsMax: number;
  entryFindingsMax: number;
  addendaPerEntryMax: number;
}
