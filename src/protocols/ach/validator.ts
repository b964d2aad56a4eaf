import type { ErrorCode } from "../../errors/catalog.ts";
import { FindingCollector, type Severity } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";
import {
  iatMandatoryAddenda, iatOptionalAddendaMax, isChangeCode, isReturnReasonCode, returnForm,
  secCodeInfo, serviceClassDirections, transactionCodeInfo, type EntryDirection, type SecCodeInfo,
  type TransactionCodeInfo,
} from "./codes.ts";
import {
  checkFields, decodeFixedWidth, isFileIdModifier, maskAchFieldValue, type FieldProblem,
} from "./fixed-width.ts";
import { blockingFactor, hasLayout, layoutNamed, type RecordLayout } from "./layout.ts";
import { routingCheckDigit } from "./routing.ts";
import type {
  AchEntry, AchEvent, AchFinding, AchFindingScope, AchReadLimits, AchRecord, AchRecordKind,
  AchSummary, SeverityOverrides,
} from "./types.ts";

const entryHashModulus = 10_000_000_000;
const allNines = /^9{94}$/;
const digitsOnly = /^\d+$/;

/** The entry layout a batch's SEC code calls for. */
export function entryLayoutName(sec: string): string {
  if (sec === "CTX") return "entry-detail-ctx";
  if (sec === "IAT") return "entry-detail-iat";
  return "entry-detail";
}

export function batchHeaderLayoutName(sec: string): string {
  return sec === "IAT" ? "batch-header-iat" : "batch-header";
}

/**
 * The addenda layout for a type code (and, for 99, the return reason code's form); undefined when
 * unknown.
 */
export function addendaLayoutName(
  addendaTypeCode: string, returnReasonCode: string,
): string | undefined {
  if (addendaTypeCode === "99") {
    const form = returnForm(returnReasonCode);
    return form === "return" ? "addenda-99" : `addenda-99-${form}`;
  }
  const name = `addenda-${addendaTypeCode}`;
  return hasLayout(name) ? name : undefined;
}

/** Companies are named by company identification, IAT originators by originator identification. */
export function companyIdentificationOf(batchHeader: AchRecord): string {
  return (
    batchHeader.fields.companyIdentification ?? batchHeader.fields.originatorIdentification ?? ""
  );
}

interface BatchState {
  ordinal: number;
  header: AchRecord;
  sec: string;
  secInfo: SecCodeInfo | undefined;
  directions: EntryDirection[] | undefined;
  odfi: string;
  entryAddendaCount: number;
  entryHash: number;
  debitMinor: bigint;
  creditMinor: bigint;
  entryCount: number;
  lastTrace: string | undefined;
  hasForward: boolean;
  hasReturn: boolean;
  mixReported: boolean;
  errors: number;
  findings: AchFinding[];
}

interface PendingEntry {
  entry: AchEntry;
  transaction: TransactionCodeInfo | undefined;
  traceNumber: string;
  addendaDropped: number;
  // created with the first addenda: most entries have none
  countByType: Map<string, number> | undefined;
}

const kindOf: Record<string, AchRecordKind> = {
  "1": "fileHeader", "5": "batchHeader", "6": "entryDetail", "7": "addenda", "8": "batchControl",
  "9": "fileControl",
};

/**
 * Validates a NACHA file incrementally, one record at a time, in the order 1 (5 (6 7*)+ 8)+ 9:
 * totals are accumulated (never the records), so memory does not grow with the file. Every control
 * figure is compared with the control record AS READ. Emits typed events (an entry once its
 * addenda are complete) and collects every finding up to a bound, never stopping at the first.
 */
export class AchValidator {
  private readonly collector: FindingCollector;
  private state: "start" | "file" | "batch" | "closed" = "start";
  private fileHeader: AchRecord | undefined;
  private fileControl: AchRecord | undefined;
  private batch: BatchState | undefined;
  private pending: PendingEntry | undefined;
  private batchOrdinal = 0;
  private fileEntryAddendaCount = 0;
  private fileEntryHash = 0;
  private fileDebitMinor = 0n;
  private fileCreditMinor = 0n;
  private recordCount = 0;
  private lastLine = 0;
  private entryCount = 0;
  private addendaCount = 0;
  private fileErrors = 0;
  private rejectedBatchCount = 0;
  private rejectedEntryCount = 0;
  // A blank File ID Modifier is judged at the end: a zero-batch file may carry one (decision 0006).
  private blankFileIdModifier: AchRecord | undefined;

  constructor(
    private readonly limits: AchReadLimits,
    private readonly onEvent: (event: AchEvent) => void,
    private readonly options: { fileName?: string; severityOverrides?: SeverityOverrides } = {},
  ) {
    this.collector = new FindingCollector(limits.findingsMax);
  }

  /** A finding from outside the record rules (the line splitter). */
  report(
    code: ErrorCode, scope: AchFindingScope, severity: Severity, message: string,
    position: Position, valueMasked?: string,
  ): void {
    const override = this.options.severityOverrides?.[code];
    if (override === "ignore") return;
    const found: AchFinding = {
      code, severity: override ?? severity, message,
      position: this.options.fileName ? { file: this.options.fileName, ...position } : position,
      scope,
    };
    if (valueMasked !== undefined) found.valueMasked = valueMasked;
    let where = scope;
    if (where === "entry" && !this.pending) where = this.batch ? "batch" : "file";
    found.scope = where;
    if (where !== "file" && this.batch) found.batchOrdinal = this.batch.ordinal;
    this.collector.add(found);
    const isError = found.severity === "error";
    if (where === "entry" && this.pending) {
      const entry = this.pending.entry;
      if (entry.findings.length < this.limits.entryFindingsMax) entry.findings.push(found);
      if (isError) entry.rejected = true;
    } else if (where === "batch" && this.batch) {
      if (this.batch.findings.length < this.limits.entryFindingsMax) {
        this.batch.findings.push(found);
      }
      if (isError) this.batch.errors++;
    } else if (isError) {
      this.fileErrors++;
    }
  }

  line(line: number, text: string): void {
    this.lastLine = line;
    this.recordCount++;
    const type = text[0] ?? "";
    // A stray file header is reported and skipped; it must not cut the current entry from its
    // addenda.
    if (type === "1" && this.state !== "start") return this.fileHeaderRecord(line, text);
    if (type !== "7") this.flushEntry();
    if (this.state === "closed") {
      this.afterFileControl(line, text);
      return;
    }
    switch (type) {
      case "1": return this.fileHeaderRecord(line, text);
      case "5": return this.batchHeaderRecord(line, text);
      case "6": return this.entryRecord(line, text);
      case "7": return this.addendaRecord(line, text);
      case "8": return this.batchControlRecord(line, text);
      case "9":
        if (allNines.test(text)) {
          this.report(
            "ACH_RECORD_OUT_OF_ORDER", "file", "error",
            `line ${line}: 9-filled padding before the file control`, { line, recordType: "9" },
          );
          return;
        }
        return this.fileControlRecord(line, text);
      default:
        this.report(
          "ACH_RECORD_TYPE_UNKNOWN", "file", "error",
          `line ${line}: record type ${JSON.stringify(type)} is not 1, 5, 6, 7, 8 or 9`,
          { line, column: 1 }, maskAchFieldValue("recordTypeCode", type),
        );
    }
  }

  finish(): AchSummary {
    this.flushEntry();
    if (this.state === "batch") {
      this.report(
        "ACH_BATCH_CONTROL_MISSING", "batch", "error",
        `batch ${this.batch?.ordinal} (line ${this.batch?.header.line}) has no batch control ` +
        `before the end of the file`,
        { line: this.lastLine },
      );
      this.closeBatch(undefined);
    }
    this.judgeBlankFileIdModifier();
    if (this.recordCount === 0) {
      this.report("INPUT_EMPTY", "file", "error", "the file holds no record", { line: 1 });
    } else if (!this.fileControl) {
      if (this.state !== "start") {
        this.report(
          "ACH_FILE_CONTROL_MISSING", "file", "error", "the file has no file control record (9)",
          { line: this.lastLine },
        );
      }
    } else {
      this.checkBlocks(this.fileControl);
    }
    const summary: AchSummary = {
      findings: this.collector.findings as AchFinding[],
      findingsDropped: this.collector.dropped,
      errorCount: this.collector.errorCount,
      warningCount: this.collector.warningCount,
      fileRejected: this.fileErrors > 0,
      rejectedBatchCount: this.rejectedBatchCount,
      rejectedEntryCount: this.rejectedEntryCount,
      lineCount: this.lastLine,
      recordCount: this.recordCount,
      batchCount: this.batchOrdinal,
      entryCount: this.entryCount,
      addendaCount: this.addendaCount,
      totalDebitMinor: this.fileDebitMinor,
      totalCreditMinor: this.fileCreditMinor,
    };
    if (this.fileHeader) summary.fileHeader = this.fileHeader;
    if (this.fileControl) summary.fileControl = this.fileControl;
    this.onEvent({ type: "end", summary });
    return summary;
  }

  /** The line number the splitter reached: findings at the end of input point there. */
  set lastPhysicalLine(line: number) {
    this.lastLine = Math.max(this.lastLine, line);
  }

  private decode(
    layout: RecordLayout, line: number, text: string, scope: AchFindingScope,
  ): AchRecord {
    const fields = decodeFixedWidth(layout, text);
    const record: AchRecord = {
      kind: kindOf[layout.recordTypeCode] ?? "addenda", layout: layout.name, line, fields,
    };
    const problems: FieldProblem[] = [];
    checkFields(layout, fields, problems);
    for (const p of problems) {
      if (
        layout.recordTypeCode === "1" && p.field === "fileIdModifier" &&
        p.code === "ACH_MANDATORY_FIELD_MISSING"
      ) {
        this.blankFileIdModifier = record;
        continue;
      }
      this.report(
        p.code,
        scope,
        p.severity,
        `line ${line} ${p.field}: ${p.message}`,
        {
          line, recordType: layout.recordTypeCode, field: p.field,
          column: (layout.byName.get(p.field)?.start ?? 1) + (p.columnOffset ?? 0),
        },
        p.valueMasked,
      );
    }
    return record;
  }

  private fieldFinding(
    code: ErrorCode, scope: AchFindingScope, record: AchRecord, field: string, message: string,
    severity: Severity = "error", problem?: FieldProblem,
  ): void {
    const layout = layoutNamed(record.layout);
    this.report(
      code,
      scope,
      severity,
      `line ${record.line} ${field}: ${message}`,
      {
        line: record.line, recordType: layout.recordTypeCode, field,
        column: (layout.byName.get(field)?.start ?? 1) + (problem?.columnOffset ?? 0),
      },
      problem?.valueMasked ?? maskAchFieldValue(field, record.fields[field] ?? ""),
    );
  }

  private fileHeaderRecord(line: number, text: string): void {
    if (this.state !== "start") {
      this.report(
        "ACH_RECORD_OUT_OF_ORDER", "file", "error",
        `line ${line}: a file header must be the first record, found one after line ` +
        `${this.fileHeader?.line ?? 1}`,
        { line, recordType: "1" },
      );
      return;
    }
    const record = this.decode(layoutNamed("file-header"), line, text, "file");
    const modifier = record.fields.fileIdModifier ?? "";
    if (modifier.trim() !== "" && !isFileIdModifier(modifier)) {
      this.fieldFinding(
        "ACH_FILE_ID_MODIFIER_INVALID", "file", record, "fileIdModifier",
        `${JSON.stringify(modifier)} is not A-Z or 0-9`,
      );
    }
    this.checkImmediateDestination(record);
    this.fileHeader = record;
    this.state = "file";
    this.onEvent({ type: "fileHeader", record });
  }

  /**
   * The Immediate Destination is kept as text (processors put placeholders there); a routing number
   * whose check digit fails is a named warning, never a refusal (decision 0006).
   */
  private checkImmediateDestination(record: AchRecord): void {
    const destination = (record.fields.immediateDestination ?? "").trim();
    if (!/^\d{9}$/.test(destination)) return;
    const expected = routingCheckDigit(destination.slice(0, 8));
    if (expected !== destination[8]) {
      this.fieldFinding(
        "ACH_IMMEDIATE_DESTINATION_CHECK_DIGIT", "file", record, "immediateDestination",
        `routing number ${destination} fails its check digit (expected ${expected}); read as given`,
        "warning",
      );
    }
  }

  /**
   * A blank File ID Modifier: a warning in a zero-batch file (nothing to tell apart), an error
   * otherwise.
   */
  private judgeBlankFileIdModifier(): void {
    const record = this.blankFileIdModifier;
    if (record === undefined) return;
    if (this.batchOrdinal === 0) {
      this.fieldFinding(
        "ACH_ZERO_FILE_ID_MODIFIER_BLANK", "file", record, "fileIdModifier",
        "blank in a file without batches; accepted", "warning",
      );
    } else {
      this.fieldFinding(
        "ACH_MANDATORY_FIELD_MISSING", "file", record, "fileIdModifier", "fileIdModifier is blank",
      );
    }
  }

  private requireFileHeader(line: number, recordType: string): void {
    if (this.state !== "start") return;
    this.report(
      "ACH_FILE_HEADER_MISSING", "file", "error",
      `line ${line}: the file does not start with a file header record (1)`, { line, recordType },
    );
    this.state = "file";
  }

  private batchHeaderRecord(line: number, text: string): void {
    this.requireFileHeader(line, "5");
    if (this.state === "batch") {
      this.report(
        "ACH_BATCH_CONTROL_MISSING", "batch", "error",
        `line ${line}: batch ${this.batch?.ordinal} (line ${this.batch?.header.line}) is not ` +
        `closed by a batch control before the next batch header`,
        { line, recordType: "5" },
      );
      this.closeBatch(undefined);
    }
    const sec = text.slice(50, 53);
    this.batchOrdinal++;
    const layout = layoutNamed(batchHeaderLayoutName(sec));
    const header: AchRecord = {
      kind: "batchHeader", layout: layout.name, line, fields: decodeFixedWidth(layout, text),
    };
    const scc = header.fields.serviceClassCode ?? "";
    this.batch = {
      ordinal: this.batchOrdinal, header, sec, secInfo: secCodeInfo(sec),
      directions: serviceClassDirections(scc),
      odfi: header.fields.originatingDfiIdentification ?? "", entryAddendaCount: 0, entryHash: 0,
      debitMinor: 0n, creditMinor: 0n, entryCount: 0, lastTrace: undefined, hasForward: false,
      hasReturn: false, mixReported: false, errors: 0, findings: [],
    };
    this.state = "batch";
    this.decode(layout, line, text, "batch");
    if (digitsOnly.test(scc) && !this.batch.directions) {
      this.fieldFinding(
        "ACH_SERVICE_CLASS_CODE_INVALID", "batch", header, "serviceClassCode",
        `${scc} is not 200, 220, 225 or 280`,
      );
    }
    if (!this.batch.secInfo) {
      this.fieldFinding(
        "ACH_SEC_CODE_UNKNOWN", "batch", header, "standardEntryClassCode",
        `${JSON.stringify(sec)} is not a known SEC code`,
      );
    }
    this.onEvent({ type: "batchHeader", record: header, batchOrdinal: this.batchOrdinal });
  }

  private entryRecord(line: number, text: string): void {
    this.requireFileHeader(line, "6");
    const batch = this.batch;
    if (this.state !== "batch" || !batch) {
      this.report(
        "ACH_RECORD_OUT_OF_ORDER", "file", "error",
        `line ${line}: an entry detail record outside a batch (no open batch header)`,
        { line, recordType: "6" },
      );
      return;
    }
    const layout = layoutNamed(entryLayoutName(batch.sec));
    const fields = decodeFixedWidth(layout, text);
    const record: AchRecord = { kind: "entryDetail", layout: layout.name, line, fields };
    const entry: AchEntry = {
      batchOrdinal: batch.ordinal, record, addenda: [], batchHeader: batch.header, findings: [],
      rejected: false,
    };
    const transaction = transactionCodeInfo(fields.transactionCode ?? "");
    const traceNumber = fields.traceNumber ?? "";
    this.pending = { entry, transaction, traceNumber, addendaDropped: 0, countByType: undefined };
    this.entryCount++;
    batch.entryCount++;
    batch.entryAddendaCount++;
    this.fileEntryAddendaCount++;

    this.checkEntryFields(layout, record, batch);
    this.checkTransactionCode(record, batch, transaction);
    this.addRoutingToHash(record, batch);
    this.addAmountToTotals(record, batch, transaction);
    this.checkTraceOrder(record, batch, traceNumber);
  }

  private checkEntryFields(layout: RecordLayout, record: AchRecord, batch: BatchState): void {
    const fields = record.fields;
    const problems: FieldProblem[] = [];
    checkFields(layout, fields, problems);
    for (const p of problems)
      this.fieldFinding(p.code, "entry", record, p.field, p.message, p.severity, p);
    const nameField = layout.byName.has("individualName")
      ? "individualName"
      : layout.byName.has("receivingCompanyName")
        ? "receivingCompanyName"
        : undefined;
    if (
      nameField && batch.secInfo?.nameMandatory &&
      layout.byName.get(nameField)?.presence !== "mandatory"
    ) {
      const name = (fields[nameField] ?? "").trim();
      if (name === "" || /^0+$/.test(name)) {
        this.fieldFinding(
          "ACH_MANDATORY_FIELD_MISSING", "entry", record, nameField,
          `${nameField} is ${name === "" ? "blank" : "all zeros"}, mandatory for ${batch.sec}`,
        );
      }
    }
  }

  private checkTransactionCode(
    record: AchRecord, batch: BatchState, transaction: TransactionCodeInfo | undefined,
  ): void {
    const fields = record.fields;
    const code = fields.transactionCode ?? "";
    if (!transaction) {
      if (digitsOnly.test(code)) {
        this.fieldFinding(
          "ACH_TRANSACTION_CODE_INVALID", "entry", record, "transactionCode",
          `${code} is not a NACHA transaction code`,
        );
      }
    } else {
      const info = batch.secInfo;
      const allowed =
        !info ||
        ((info.directions.includes(transaction.direction) || transaction.purpose === "return") &&
          (!info.purposes || info.purposes.includes(transaction.purpose)) &&
          (!info.accounts || info.accounts.includes(transaction.account)));
      if (!allowed) {
        this.fieldFinding(
          "ACH_TRANSACTION_CODE_NOT_ALLOWED", "entry", record, "transactionCode",
          `${code} (${transaction.account} ${transaction.direction} ${transaction.purpose}) is ` +
          `not allowed in a ${batch.sec} batch`,
        );
      }
      if (batch.directions && !batch.directions.includes(transaction.direction)) {
        // IAT senders (and moov-io/ach's IAT samples) label mixed IAT batches 220; the totals are
        // still checked, so this is a warning there and an error everywhere else.
        this.fieldFinding(
          "ACH_SERVICE_CLASS_ENTRY_MISMATCH", "batch", record, "transactionCode",
          `a ${transaction.direction} entry in a batch of service class ` +
          `${batch.header.fields.serviceClassCode}`,
          batch.sec === "IAT" ? "warning" : "error",
        );
      }
    }
  }

  private addRoutingToHash(record: AchRecord, batch: BatchState): void {
    const fields = record.fields;
    const rdfi = fields.receivingDfiIdentification ?? "";
    const check = routingCheckDigit(rdfi);
    if (check !== undefined) {
      batch.entryHash = (batch.entryHash + Number(rdfi)) % entryHashModulus;
      this.fileEntryHash = (this.fileEntryHash + Number(rdfi)) % entryHashModulus;
      if (digitsOnly.test(fields.checkDigit ?? "") && fields.checkDigit !== check) {
        this.fieldFinding(
          "ACH_ROUTING_CHECK_DIGIT", "entry", record, "checkDigit",
          `check digit ${fields.checkDigit} does not match RDFI ${rdfi} (expected ${check})`,
        );
      }
    }
  }

  private addAmountToTotals(
    record: AchRecord, batch: BatchState, transaction: TransactionCodeInfo | undefined,
  ): void {
    const fields = record.fields;
    const amount = fields.amount ?? "";
    if (digitsOnly.test(amount) && transaction) {
      const minor = BigInt(amount);
      if (transaction.direction === "debit") {
        batch.debitMinor += minor;
        this.fileDebitMinor += minor;
      } else {
        batch.creditMinor += minor;
        this.fileCreditMinor += minor;
      }
      if (minor !== 0n && (transaction.purpose === "prenote" || batch.sec === "COR")) {
        this.fieldFinding(
          "ACH_AMOUNT_MUST_BE_ZERO", "entry", record, "amount",
          `a ${batch.sec === "COR" ? "notification of change" : "prenotification"} must carry a ` +
          `zero amount`,
        );
      }
    }
  }

  private checkTraceOrder(record: AchRecord, batch: BatchState, traceNumber: string): void {
    if (digitsOnly.test(traceNumber)) {
      if (digitsOnly.test(batch.odfi) && !traceNumber.startsWith(batch.odfi)) {
        this.fieldFinding(
          "ACH_TRACE_ODFI_MISMATCH", "batch", record, "traceNumber",
          `trace ${traceNumber} does not begin with the batch ODFI ${batch.odfi}`,
        );
      }
      if (batch.lastTrace !== undefined && traceNumber <= batch.lastTrace) {
        this.fieldFinding(
          "ACH_TRACE_NOT_ASCENDING", "batch", record, "traceNumber",
          `trace ${traceNumber} does not follow ${batch.lastTrace} in ascending order`,
        );
      }
      batch.lastTrace = traceNumber;
    }
  }

  private addendaRecord(line: number, text: string): void {
    this.requireFileHeader(line, "7");
    const pending = this.pending;
    const batch = this.batch;
    if (batch) {
      batch.entryAddendaCount++;
      this.fileEntryAddendaCount++;
    }
    this.addendaCount++;
    if (!pending || !batch) {
      this.report(
        "ACH_RECORD_OUT_OF_ORDER", batch ? "batch" : "file", "error",
        `line ${line}: an addenda record that follows no entry detail record`,
        { line, recordType: "7" },
      );
      return;
    }
    const entry = pending.entry;
    if (entry.addenda.length + pending.addendaDropped >= this.limits.addendaPerEntryMax) {
      if (pending.addendaDropped++ === 0) {
        this.report(
          "ACH_ADDENDA_TOO_MANY", "entry", "error",
          `line ${line}: entry at line ${entry.record.line} carries more than ` +
          `${this.limits.addendaPerEntryMax} addenda; the rest are counted, not kept`,
          { line, recordType: "7" },
        );
      }
      return;
    }
    const typeCode = text.slice(1, 3);
    const layoutName = addendaLayoutName(typeCode, text.slice(3, 6));
    if (!layoutName) {
      this.report(
        "ACH_ADDENDA_TYPE_UNKNOWN", "entry", "error",
        `line ${line}: addenda type ${JSON.stringify(typeCode)} is not known`,
        { line, recordType: "7", field: "addendaTypeCode", column: 2 }, typeCode,
      );
      return;
    }
    const layout = layoutNamed(layoutName);
    const record: AchRecord = {
      kind: "addenda", layout: layoutName, line, fields: decodeFixedWidth(layout, text),
    };
    entry.addenda.push(record);
    const problems: FieldProblem[] = [];
    checkFields(layout, record.fields, problems);
    for (const p of problems)
      this.fieldFinding(p.code, "entry", record, p.field, p.message, p.severity, p);

    pending.countByType ??= new Map();
    const sameType = (pending.countByType.get(typeCode) ?? 0) + 1;
    pending.countByType.set(typeCode, sameType);
    this.checkAddendaType(record, batch, entry, typeCode);
    this.checkAddendaSequences(record, pending, sameType);
    if (typeCode === "99") this.checkReturnCodes(record);
    if (typeCode === "98") {
      const change = record.fields.changeCode ?? "";
      if (!isChangeCode(change)) {
        this.fieldFinding(
          "ACH_CHANGE_CODE_INVALID", "entry", record, "changeCode",
          `${JSON.stringify(change)} is not a change code C01-C14`,
        );
      }
    }
  }

  private checkAddendaType(
    record: AchRecord, batch: BatchState, entry: AchEntry, typeCode: string,
  ): void {
    const sec = batch.sec;
    const allowed =
      typeCode === "99"
        ? sec !== "COR"
        : typeCode === "98"
          ? sec === "COR"
          : (batch.secInfo?.addendaTypes.includes(typeCode) ?? true);
    if (!allowed) {
      this.fieldFinding(
        "ACH_ADDENDA_TYPE_NOT_ALLOWED", "entry", record, "addendaTypeCode",
        `addenda ${typeCode} is not allowed in a ${sec} batch`,
      );
    }
    if (
      sec === "IAT" && entry.addenda.length <= iatMandatoryAddenda.length &&
      typeCode !== iatMandatoryAddenda[entry.addenda.length - 1]
    ) {
      this.fieldFinding(
        "ACH_ADDENDA_MISSING", "entry", record, "addendaTypeCode",
        `IAT addenda ${entry.addenda.length} must be type ` +
        `${iatMandatoryAddenda[entry.addenda.length - 1]}, found ${typeCode}`,
      );
    }
  }

  private checkAddendaSequences(
    record: AchRecord, pending: PendingEntry, sameType: number,
  ): void {
    const sequence = record.fields.addendaSequenceNumber;
    if (sequence !== undefined && digitsOnly.test(sequence) && Number(sequence) !== sameType) {
      this.fieldFinding(
        "ACH_ADDENDA_SEQUENCE_INVALID", "entry", record, "addendaSequenceNumber",
        `addenda sequence ${sequence}, expected ${String(sameType).padStart(4, "0")}`,
      );
    }
    const entrySequence = record.fields.entryDetailSequenceNumber;
    if (
      entrySequence !== undefined && digitsOnly.test(entrySequence) &&
      entrySequence !== pending.traceNumber.slice(8)
    ) {
      this.fieldFinding(
        "ACH_ADDENDA_ENTRY_SEQUENCE_MISMATCH", "entry", record, "entryDetailSequenceNumber",
        `${entrySequence} is not the last 7 digits of the entry's trace ${pending.traceNumber}`,
      );
    }
    const trace = record.fields.traceNumber;
    if (trace !== undefined && trace !== pending.traceNumber) {
      this.fieldFinding(
        "ACH_ADDENDA_TRACE_MISMATCH", "entry", record, "traceNumber",
        `addenda trace ${trace} differs from the entry's trace ${pending.traceNumber}`, "warning",
      );
    }
  }

  private checkReturnCodes(record: AchRecord): void {
    const reason = record.fields.returnReasonCode ?? "";
    if (!isReturnReasonCode(reason)) {
      this.fieldFinding(
        "ACH_RETURN_REASON_CODE_INVALID", "entry", record, "returnReasonCode",
        `${JSON.stringify(reason)} is not a return reason code R01-R85`,
      );
    }
    for (const field of ["originalReturnReasonCode", "dishonoredReturnReasonCode"]) {
      const code = record.fields[field];
      if (code !== undefined && !isReturnReasonCode(`R${code}`)) {
        this.fieldFinding(
          "ACH_RETURN_REASON_CODE_INVALID", "entry", record, field,
          `R${code} is not a return reason code R01-R85`,
        );
      }
    }
  }

  private flushEntry(): void {
    const pending = this.pending;
    const batch = this.batch;
    if (!pending || !batch) return;
    const entry = pending.entry;
    const record = entry.record;
    const count = entry.addenda.length + pending.addendaDropped;
    const indicator = record.fields.addendaRecordIndicator ?? "";
    if ((indicator === "1") !== count > 0) {
      this.fieldFinding(
        "ACH_ADDENDA_INDICATOR_MISMATCH", "entry", record, "addendaRecordIndicator",
        `indicator ${JSON.stringify(indicator)} but ${count} addenda follow`,
      );
    }
    const byType = pending.countByType ?? new Map<string, number>();
    const returns = byType.get("99") ?? 0;
    const changes = byType.get("98") ?? 0;
    const isReturn = returns > 0 || changes > 0 || pending.transaction?.purpose === "return";
    this.checkAddendaCounts(record, batch, entry, byType);
    if (isReturn) batch.hasReturn = true;
    else batch.hasForward = true;
    if (batch.hasReturn && batch.hasForward && !batch.mixReported) {
      batch.mixReported = true;
      this.fieldFinding(
        "ACH_BATCH_MIXES_FORWARD_AND_RETURN", "batch", record, "transactionCode",
        `batch ${batch.ordinal} holds both forward entries and returns/NOCs`,
      );
    }
    this.pending = undefined;
    if (entry.rejected) this.rejectedEntryCount++;
    this.onEvent({ type: "entry", entry });
  }

  private checkAddendaCounts(
    record: AchRecord, batch: BatchState, entry: AchEntry, byType: Map<string, number>,
  ): void {
    const returns = byType.get("99") ?? 0;
    const changes = byType.get("98") ?? 0;
    if (batch.sec === "IAT") {
      const mandatoryPresent = iatMandatoryAddenda.filter((t) => byType.has(t)).length;
      if (mandatoryPresent < iatMandatoryAddenda.length) {
        this.fieldFinding(
          "ACH_ADDENDA_MISSING", "entry", record, "addendaRecordIndicator",
          `an IAT entry needs addenda ${iatMandatoryAddenda.join(", ")}; ${mandatoryPresent} of ` +
          `them follow`,
        );
      }
      for (const [type, max] of Object.entries(iatOptionalAddendaMax)) {
        if ((byType.get(type) ?? 0) > max) {
          this.fieldFinding(
            "ACH_ADDENDA_TOO_MANY", "entry", record, "addendaRecordIndicator",
            `${byType.get(type)} addenda ${type}, at most ${max} per IAT entry`,
          );
        }
      }
    } else if (batch.secInfo) {
      const own = batch.secInfo.addendaTypes.reduce((sum, t) => sum + (byType.get(t) ?? 0), 0);
      if (own > batch.secInfo.addendaMax && batch.sec !== "COR") {
        this.fieldFinding(
          "ACH_ADDENDA_TOO_MANY", "entry", record, "addendaRecordIndicator",
          `${own} addenda, at most ${batch.secInfo.addendaMax} for ${batch.sec}`,
        );
      }
      if (changes > 1) {
        this.fieldFinding(
          "ACH_ADDENDA_TOO_MANY", "entry", record, "addendaRecordIndicator",
          `${changes} addenda 98, a notification of change carries one`,
        );
      }
    }
    if (returns > 0) {
      const forms = entry.addenda
        .filter((a) => a.layout.startsWith("addenda-99"))
        .map((a) => a.layout);
      if (new Set(forms).size !== forms.length) {
        this.fieldFinding(
          "ACH_ADDENDA_TOO_MANY", "entry", record, "addendaRecordIndicator",
          "more than one addenda 99 of the same form (return, dishonored, contested)",
        );
      }
    }
    const declared = record.fields.numberOfAddendaRecords;
    if (
      batch.sec === "CTX" && declared !== undefined && digitsOnly.test(declared) &&
      Number(declared) !== (byType.get("05") ?? 0)
    ) {
      this.fieldFinding(
        "ACH_ADDENDA_COUNT_MISMATCH", "entry", record, "numberOfAddendaRecords",
        `declares ${Number(declared)} addenda, ${byType.get("05") ?? 0} follow`,
      );
    }
  }

  private batchControlRecord(line: number, text: string): void {
    this.requireFileHeader(line, "8");
    const batch = this.batch;
    if (this.state !== "batch" || !batch) {
      this.report(
        "ACH_RECORD_OUT_OF_ORDER", "file", "error",
        `line ${line}: a batch control without an open batch`, { line, recordType: "8" },
      );
      return;
    }
    const control = this.decode(layoutNamed("batch-control"), line, text, "batch");
    const c = control.fields;
    const h = batch.header.fields;
    const mismatch = (field: string, controlValue: string, headerValue: string) => {
      if (controlValue !== headerValue) {
        this.fieldFinding(
          "ACH_BATCH_CONTROL_MISMATCH", "batch", control, field,
          `control ${JSON.stringify(controlValue)} differs from header ` +
          `${JSON.stringify(headerValue)} (line ${batch.header.line})`,
        );
      }
    };
    mismatch("serviceClassCode", c.serviceClassCode ?? "", h.serviceClassCode ?? "");
    const controlCompany = (c.companyIdentification ?? "").trim();
    if (!(batch.sec === "IAT" && controlCompany === "")) {
      mismatch(
        "companyIdentification", controlCompany, companyIdentificationOf(batch.header).trim(),
      );
    }
    mismatch(
      "originatingDfiIdentification", c.originatingDfiIdentification ?? "",
      h.originatingDfiIdentification ?? "",
    );
    mismatch("batchNumber", c.batchNumber ?? "", h.batchNumber ?? "");
    if (batch.entryCount === 0) {
      this.report(
        "ACH_BATCH_EMPTY", "batch", "error",
        `batch ${batch.ordinal} (line ${batch.header.line}) holds no entry`,
        { line, recordType: "8" },
      );
    }
    this.compareCount(
      "ACH_BATCH_ENTRY_ADDENDA_COUNT_MISMATCH", "batch", control, "entryAddendaCount",
      batch.entryAddendaCount,
    );
    this.compareHash(
      "ACH_BATCH_ENTRY_HASH_MISMATCH", "batch", control, "entryHash", batch.entryHash,
    );
    this.compareAmount(
      "ACH_BATCH_TOTAL_DEBIT_MISMATCH", "batch", control, "totalDebitEntryDollarAmount",
      batch.debitMinor,
    );
    this.compareAmount(
      "ACH_BATCH_TOTAL_CREDIT_MISMATCH", "batch", control, "totalCreditEntryDollarAmount",
      batch.creditMinor,
    );
    this.closeBatch(control);
  }

  private closeBatch(control: AchRecord | undefined): void {
    const batch = this.batch;
    if (!batch) return;
    const rejected = batch.errors > 0;
    if (rejected) this.rejectedBatchCount++;
    this.onEvent({
      type: "batchControl", record: control, batchOrdinal: batch.ordinal, batchRejected: rejected,
      findings: batch.findings,
    });
    this.batch = undefined;
    this.state = "file";
  }

  private fileControlRecord(line: number, text: string): void {
    this.requireFileHeader(line, "9");
    if (this.state === "batch") {
      this.report(
        "ACH_BATCH_CONTROL_MISSING", "batch", "error",
        `line ${line}: batch ${this.batch?.ordinal} (line ${this.batch?.header.line}) is not ` +
        `closed by a batch control before the file control`,
        { line, recordType: "9" },
      );
      this.closeBatch(undefined);
    }
    const control = this.decode(layoutNamed("file-control"), line, text, "file");
    this.compareCount(
      "ACH_FILE_BATCH_COUNT_MISMATCH", "file", control, "batchCount", this.batchOrdinal,
    );
    this.compareCount(
      "ACH_FILE_ENTRY_ADDENDA_COUNT_MISMATCH", "file", control, "entryAddendaCount",
      this.fileEntryAddendaCount,
    );
    this.compareHash(
      "ACH_FILE_ENTRY_HASH_MISMATCH", "file", control, "entryHash", this.fileEntryHash,
    );
    this.compareAmount(
      "ACH_FILE_TOTAL_DEBIT_MISMATCH", "file", control, "totalDebitEntryDollarAmountInFile",
      this.fileDebitMinor,
    );
    this.compareAmount(
      "ACH_FILE_TOTAL_CREDIT_MISMATCH", "file", control, "totalCreditEntryDollarAmountInFile",
      this.fileCreditMinor,
    );
    this.fileControl = control;
    this.state = "closed";
    this.onEvent({ type: "fileControl", record: control });
  }

  private afterFileControl(line: number, text: string): void {
    if (allNines.test(text)) return;
    if (text[0] === "9") {
      this.report(
        "ACH_PADDING_INVALID", "file", "error",
        `line ${line}: padding after the file control must be 94 nines`, { line, recordType: "9" },
      );
      return;
    }
    this.report(
      "ACH_RECORD_AFTER_FILE_CONTROL", "file", "error",
      `line ${line}: a record of type ${JSON.stringify(text[0])} after the file control (line ` +
      `${this.fileControl?.line})`,
      { line, recordType: text[0] ?? "" },
    );
  }

  /** Block count is checked at the end: the padding after the file control counts too. */
  private checkBlocks(control: AchRecord): void {
    const blocks = Math.ceil(this.recordCount / blockingFactor);
    this.compareCount("ACH_FILE_BLOCK_COUNT_MISMATCH", "file", control, "blockCount", blocks);
    if (this.recordCount % blockingFactor !== 0) {
      this.report(
        "ACH_BLOCK_PADDING_MISSING", "file", "warning",
        `${this.recordCount} records is not a multiple of ${blockingFactor}: 9-filled padding is ` +
        `missing`,
        { line: this.lastLine },
      );
    }
  }

  private compareCount(
    code: ErrorCode, scope: AchFindingScope, control: AchRecord, field: string, computed: number,
  ): void {
    const read = control.fields[field] ?? "";
    if (digitsOnly.test(read) && Number(read) !== computed) {
      this.fieldFinding(
        code, scope, control, field, `control says ${Number(read)}, the file holds ${computed}`,
      );
    }
  }

  private compareHash(
    code: ErrorCode, scope: AchFindingScope, control: AchRecord, field: string, computed: number,
  ): void {
    const read = control.fields[field] ?? "";
    const expected = String(computed).padStart(10, "0");
    if (digitsOnly.test(read) && read !== expected) {
      this.fieldFinding(
        code, scope, control, field,
        `control says ${read}, the RDFI identifications sum to ${expected}`,
      );
    }
  }

  private compareAmount(
    code: ErrorCode, scope: AchFindingScope, control: AchRecord, field: string, computed: bigint,
  ): void {
    const read = control.fields[field] ?? "";
    if (digitsOnly.test(read) && BigInt(read) !== computed) {
      this.fieldFinding(
        code, scope, control, field,
        `control says ${BigInt(read)}, the entries sum to ${computed} (minor units)`,
      );
    }
  }
}
