import { finding, type Finding } from "../../errors/finding.ts";
import { transactionCodeInfo } from "../ach/codes.ts";
import { AchParser } from "../ach/reader.ts";
import type { AchEntry, AchEvent, AchRecord } from "../ach/types.ts";
import type { ExternalItem, ExternalPart, ExternalStatementHead } from "./external-item.ts";

const field = (record: AchRecord | undefined, name: string): string => (record?.fields[name] ?? "").trim();

/** YYMMDD -> YYYY-MM-DD (NACHA dates are this century). */
function isoDate(yymmdd: string): string | undefined {
  if (!/^\d{6}$/.test(yymmdd)) return undefined;
  const date = `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
  return Number.isNaN(Date.parse(date)) ? undefined : date;
}

interface Total {
  date: string;
  direction: "C" | "D";
  amountMinor: bigint;
  parts: ExternalPart[];
  batches: number[];
  position: string;
}

interface Batch {
  ordinal: number;
  date: string | undefined;
  header: AchRecord;
  forward: AchEntry[];
  returned: AchEntry[];
}

/**
 * A NACHA file as the partner's side of a reconciliation (docs/decisions/0027): what the partner
 * settles with us is the control totals of its batches, per effective entry date and direction
 * (batch control fields 5-6: total debit and total credit). Each such total is one item whose
 * parts are the entries it adds up (amount and trace), so the totals match our transfers one to
 * many (rule batch-by-parts). A returned entry
 * (an entry with a return addenda, type 99) is its own item: the evidence for that return, with
 * its reason code and the trace of the entry it returns. Pure: no database.
 *
 * Read as a stream: bytes in, items out. A returned entry is an item as soon as it is read; the
 * totals are items at the end of the file (a date's total adds up batches anywhere in it), so
 * what is held is the current batch's entries and each total's parts (amount and trace per entry).
 */
export class AchTotalsReader {
  readonly findings: Finding[] = [];
  private readonly totals = new Map<string, Total>();
  private readonly parser: AchParser;
  private fileHeader: AchRecord | undefined;
  private batch: Batch | undefined;
  private ready: ExternalItem[] = [];
  private items = 0;

  constructor(private readonly itemsMax: number) {
    this.parser = new AchParser((event) => this.onEvent(event));
  }

  get stopped(): boolean {
    return this.parser.stopped;
  }

  push(chunk: Uint8Array): ExternalItem[] {
    this.parser.push(chunk);
    return this.take();
  }

  /** The totals, once the file has ended; `head` is known from then on. */
  finish(): ExternalItem[] {
    const summary = this.parser.finish();
    for (const f of summary.findings) if (f.severity === "error") this.findings.push(f);
    for (const [key, total] of [...this.totals].sort(([a], [b]) => (a < b ? -1 : 1))) this.ready.push(totalItem(this.fileId, key, total));
    const items = this.take();
    if (this.items > this.itemsMax) this.findings.push(finding("RECON_ENTRIES_TOO_MANY", `${this.items} items; at most ${this.itemsMax} per import`, {}));
    return items;
  }

  get head(): ExternalStatementHead {
    return { ...(this.fileHeader === undefined ? {} : { statementRef: `ach:${this.fileId}` }), currency: "USD" };
  }

  private get fileId(): string {
    const header = this.fileHeader;
    return header === undefined ? "file" : ["immediateOrigin", "fileCreationDate", "fileCreationTime", "fileIdModifier"].map((n) => field(header, n)).join("");
  }

  private take(): ExternalItem[] {
    const items = this.ready;
    this.ready = [];
    this.items += items.length;
    return items;
  }

  private onEvent(event: AchEvent): void {
    const batch = this.batch;
    if (event.type === "fileHeader") this.fileHeader = event.record;
    else if (event.type === "batchHeader") this.batch = { ordinal: event.batchOrdinal, date: isoDate(field(event.record, "effectiveEntryDate")), header: event.record, forward: [], returned: [] };
    else if (event.type === "entry" && batch !== undefined) {
      const returned = event.entry.addenda.find((a) => a.layout.startsWith("addenda-99"));
      if (returned !== undefined) {
        const item = returnItem(event.entry, returned, batch.date, this.fileHeader);
        if (item === undefined) this.findings.push(finding("RECON_ENTRY_FIELD_INVALID", "a returned entry has no readable amount, transaction code or date", { line: event.entry.record.line }));
        else this.ready.push(item);
        batch.returned.push(event.entry);
      } else batch.forward.push(event.entry);
    } else if (event.type === "batchControl" && batch !== undefined) {
      addBatchTotals(this.totals, batch, event.record, this.findings);
      this.batch = undefined;
    }
  }
}

function totalItem(fileId: string, key: string, total: Total): ExternalItem {
  return {
    itemKey: `ach:${fileId}:${key}`, position: total.position, bookingDate: total.date, valueDate: total.date, direction: total.direction,
    amountMinor: total.amountMinor, currency: "USD", status: "booked",
    // A total of one entry is that entry: its trace names our transfer as a reference would.
    refs: [...(total.parts.length === 1 ? total.parts[0]?.refs ?? [] : []), `ach-file:${fileId}`], parts: total.parts,
    description: `ACH ${total.direction === "C" ? "credits" : "debits"} effective ${total.date}, batches ${total.batches.join(",")}`,
  };
}

/** The batch control's totals (not the entries' sum: what the partner settles is what it stated) by date and direction. */
function addBatchTotals(totals: Map<string, Total>, batch: Batch, control: AchRecord | undefined, findings: Finding[]): void {
  if (control === undefined) return; // the ACH reader reported the missing control as a file error
  if (batch.date === undefined) {
    findings.push(finding("RECON_ENTRY_FIELD_INVALID", `batch ${batch.ordinal} has no readable effective entry date`, { line: batch.header.line }));
    return;
  }
  for (const [direction, controlField, codeDirection] of [["C", "totalCreditEntryDollarAmount", "credit"], ["D", "totalDebitEntryDollarAmount", "debit"]] as const) {
    const amountText = field(control, controlField);
    if (!/^\d+$/.test(amountText)) {
      findings.push(finding("RECON_ENTRY_FIELD_INVALID", `batch ${batch.ordinal} control total ${controlField} is not digits`, { line: control.line }));
      continue;
    }
    // Returns in the batch are items of their own: the total keeps the forward entries only.
    const returnedMinor = batch.returned.filter((e) => transactionCodeInfo(field(e.record, "transactionCode"))?.direction === codeDirection)
      .reduce((sum, e) => sum + BigInt(/^\d+$/.test(field(e.record, "amount")) ? field(e.record, "amount") : "0"), 0n);
    const amountMinor = BigInt(amountText) - returnedMinor;
    const entries = batch.forward.filter((e) => transactionCodeInfo(field(e.record, "transactionCode"))?.direction === codeDirection && field(e.record, "amount") !== "" && BigInt(field(e.record, "amount")) > 0n);
    if (amountMinor === 0n && entries.length === 0) continue;
    const key = `${batch.date}:${direction}`;
    const total = totals.get(key) ?? { date: batch.date, direction, amountMinor: 0n, parts: [], batches: [], position: `line ${control.line}` };
    total.amountMinor += amountMinor;
    total.batches.push(batch.ordinal);
    for (const entry of entries) total.parts.push({ amountMinor: BigInt(field(entry.record, "amount")), refs: [`trace:${field(entry.record, "traceNumber")}`] });
    totals.set(key, total);
  }
}

function returnItem(entry: AchEntry, addenda: AchRecord, batchDate: string | undefined, fileHeader: AchRecord | undefined): ExternalItem | undefined {
  const info = transactionCodeInfo(field(entry.record, "transactionCode"));
  const amount = field(entry.record, "amount");
  const date = batchDate ?? isoDate(field(fileHeader, "fileCreationDate"));
  if (info === undefined || !/^\d+$/.test(amount) || date === undefined) return undefined;
  const trace = field(entry.record, "traceNumber");
  const originalTrace = field(addenda, "originalEntryTraceNumber");
  const reason = field(addenda, "returnReasonCode");
  return {
    itemKey: `ach-return:${trace}`, position: `line ${entry.record.line}`, bookingDate: date, valueDate: date, direction: info.direction === "credit" ? "C" : "D",
    amountMinor: BigInt(amount), currency: "USD", status: "booked", refs: [`trace:${trace}`], parts: [],
    description: `ACH return ${reason} of entry ${originalTrace}`,
  };
}
