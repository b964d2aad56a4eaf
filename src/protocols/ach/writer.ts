import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { transactionCodeInfo } from "./codes.ts";
import { encodeFixedWidth } from "./fixed-width.ts";
import { blockingFactor, layoutNamed, recordLength } from "./layout.ts";
import type { AchParsedFile } from "./reader.ts";
import { addendaLayoutName, batchHeaderLayoutName, entryLayoutName } from "./validator.ts";

/** Field values by layout field name; values shorter than their field are padded as the layout says. */
export type AchFieldValues = Record<string, string | undefined>;

export interface AchEntryModel {
  fields: AchFieldValues;          // entry detail fields; addendaRecordIndicator is set from `addenda`
  addenda?: AchFieldValues[];      // each with its addendaTypeCode
}

export interface AchBatchModel {
  header: AchFieldValues;          // batch header fields (standardEntryClassCode picks the layouts)
  entries: AchEntryModel[];
  /** Control fields the writer cannot compute; company identification defaults to the header's. */
  control?: { companyIdentification?: string; messageAuthenticationCode?: string; reserved?: string };
}

export interface AchFileModel {
  fileHeader: AchFieldValues;
  batches: AchBatchModel[];
}

export interface AchWriteOptions {
  lineEnding?: "\n" | "\r\n";
  padBlocks?: boolean;             // 9-filled lines up to a multiple of 10 records (default true)
}

const nines = "9".repeat(recordLength);

/** Running totals of a batch or a file, as the control records carry them. */
export class ControlTotals {
  entryAddendaCount = 0;
  entryHash = 0;
  debitMinor = 0n;
  creditMinor = 0n;

  addEntry(fields: AchFieldValues, addendaCount: number): void {
    this.entryAddendaCount += 1 + addendaCount;
    const rdfi = fields.receivingDfiIdentification ?? "";
    if (/^\d{1,8}$/.test(rdfi)) this.entryHash = (this.entryHash + Number(rdfi)) % 10_000_000_000;
    const amount = fields.amount ?? "";
    const info = transactionCodeInfo(fields.transactionCode ?? "");
    if (info && /^\d+$/.test(amount)) {
      if (info.direction === "debit") this.debitMinor += BigInt(amount);
      else this.creditMinor += BigInt(amount);
    }
  }

  add(other: ControlTotals): void {
    this.entryAddendaCount += other.entryAddendaCount;
    this.entryHash = (this.entryHash + other.entryHash) % 10_000_000_000;
    this.debitMinor += other.debitMinor;
    this.creditMinor += other.creditMinor;
  }
}

export function encodeBatchControl(header: AchFieldValues, totals: ControlTotals, control: AchBatchModel["control"] = {}): Result<string, Finding> {
  return encodeFixedWidth(layoutNamed("batch-control"), {
    serviceClassCode: header.serviceClassCode,
    entryAddendaCount: String(totals.entryAddendaCount),
    entryHash: String(totals.entryHash),
    totalDebitEntryDollarAmount: totals.debitMinor.toString(),
    totalCreditEntryDollarAmount: totals.creditMinor.toString(),
    companyIdentification: control.companyIdentification ?? header.companyIdentification ?? header.originatorIdentification,
    messageAuthenticationCode: control.messageAuthenticationCode,
    reserved: control.reserved,
    originatingDfiIdentification: header.originatingDfiIdentification,
    batchNumber: header.batchNumber,
  });
}

export function encodeFileControl(batchCount: number, blockCount: number, totals: ControlTotals): Result<string, Finding> {
  return encodeFixedWidth(layoutNamed("file-control"), {
    batchCount: String(batchCount),
    blockCount: String(blockCount),
    entryAddendaCount: String(totals.entryAddendaCount),
    entryHash: String(totals.entryHash),
    totalDebitEntryDollarAmountInFile: totals.debitMinor.toString(),
    totalCreditEntryDollarAmountInFile: totals.creditMinor.toString(),
  });
}

export function encodeEntry(sec: string, entry: AchEntryModel, lines: string[]): Result<void, Finding> {
  const addenda = entry.addenda ?? [];
  const fields = { ...entry.fields, addendaRecordIndicator: addenda.length > 0 ? "1" : "0" };
  const encoded = encodeFixedWidth(layoutNamed(entryLayoutName(sec)), fields);
  if (!encoded.ok) return encoded;
  lines.push(encoded.value);
  for (const values of addenda) {
    const name = addendaLayoutName(values.addendaTypeCode ?? "", values.returnReasonCode ?? "");
    if (!name) return fail({ code: "ACH_ADDENDA_TYPE_UNKNOWN", severity: "error", message: `addenda type ${JSON.stringify(values.addendaTypeCode)} has no layout`, position: { recordType: "7", field: "addendaTypeCode" } });
    const line = encodeFixedWidth(layoutNamed(name), values);
    if (!line.ok) return line;
    lines.push(line.value);
  }
  return ok(undefined);
}

/**
 * Typed records -> a valid NACHA file: batch and file controls computed (counts, entry hash,
 * debit and credit totals, block count), addenda indicators set, blocks padded with 9s.
 */
export function writeAchFile(file: AchFileModel, options: AchWriteOptions = {}): Result<Buffer, Finding> {
  const lines: string[] = [];
  const header = encodeFixedWidth(layoutNamed("file-header"), file.fileHeader);
  if (!header.ok) return header;
  lines.push(header.value);
  const fileTotals = new ControlTotals();
  for (const batch of file.batches) {
    const sec = batch.header.standardEntryClassCode ?? "";
    const batchHeader = encodeFixedWidth(layoutNamed(batchHeaderLayoutName(sec)), batch.header);
    if (!batchHeader.ok) return batchHeader;
    lines.push(batchHeader.value);
    const totals = new ControlTotals();
    for (const entry of batch.entries) {
      const written = encodeEntry(sec, entry, lines);
      if (!written.ok) return written;
      totals.addEntry(entry.fields, entry.addenda?.length ?? 0);
    }
    const control = encodeBatchControl(batch.header, totals, batch.control);
    if (!control.ok) return control;
    lines.push(control.value);
    fileTotals.add(totals);
  }
  const recordCount = lines.length + 1;
  const blockCount = Math.ceil(recordCount / blockingFactor);
  const fileControl = encodeFileControl(file.batches.length, blockCount, fileTotals);
  if (!fileControl.ok) return fileControl;
  lines.push(fileControl.value);
  if (options.padBlocks ?? true) while (lines.length % blockingFactor !== 0) lines.push(nines);
  const eol = options.lineEnding ?? "\n";
  return ok(Buffer.from(lines.join(eol) + eol, "latin1"));
}

/** A parsed file back to the writer's model: what read(write(file)) == file is tested with. */
export function toAchFileModel(parsed: AchParsedFile): AchFileModel {
  return {
    fileHeader: { ...parsed.fileHeader?.fields },
    batches: parsed.batches.map((batch) => {
      const model: AchBatchModel = {
        header: { ...batch.header.fields },
        entries: batch.entries.map((e) => ({ fields: { ...e.record.fields }, addenda: e.addenda.map((a) => ({ ...a.fields })) })),
      };
      if (batch.control) {
        const c = batch.control.fields;
        model.control = {
          companyIdentification: c.companyIdentification ?? "",
          messageAuthenticationCode: c.messageAuthenticationCode ?? "",
          reserved: c.reserved ?? "",
        };
      }
      return model;
    }),
  };
}
