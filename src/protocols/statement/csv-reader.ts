import { finding, type Finding } from "../../errors/finding.ts";
import { decimalToMinor } from "../iso4217/currency.ts";
import { taggedRef, type ExternalItem } from "./external-item.ts";

export const csvColumns = ["id", "date", "amount", "currency", "reference", "description"] as const;

export interface CsvReadLimits {
  rowsMax: number;        // items one file may have
  lineCharsMax: number;   // characters of one line: a file without line breaks stops here
  findingsMax: number;    // findings kept; reading goes on
}

/**
 * A plain CSV of external items, for every other side: a header line naming the columns
 * id,date,amount,currency,reference,description (any order; description optional), then one row
 * per item. The amount is a signed decimal from our account's point of view: positive, they
 * credited us; negative, they debited us. Fields may be quoted ("a,b" and "" for a quote) within a
 * line. Read as a stream: text in, the items of its complete lines out; memory is one line.
 */
export class CsvStatementReader {
  private rest = "";
  private header: string[] | undefined;
  private lineNumber = 0;
  private items = 0;
  readonly findings: Finding[] = [];
  stopped = false;

  constructor(private readonly limits: CsvReadLimits) {}

  /** The items of the lines this text completes. */
  push(text: string): ExternalItem[] {
    if (this.stopped) return [];
    const lines = (this.rest + text).split("\n");
    this.rest = lines.pop() ?? "";
    const items = this.readLines(lines);
    if (!this.stopped && this.rest.length > this.limits.lineCharsMax) {
      this.stop(finding("RECON_ENTRY_FIELD_INVALID", `line ${this.lineNumber + 1} is longer than ${this.limits.lineCharsMax} characters`, { line: this.lineNumber + 1 }));
    }
    return items;
  }

  /** The items of the last line (one without a line break), once the text has ended. */
  finish(): ExternalItem[] {
    const items = this.stopped ? [] : this.readLines([this.rest]);
    this.rest = "";
    return items;
  }

  private readLines(lines: string[]): ExternalItem[] {
    const items: ExternalItem[] = [];
    for (const raw of lines) {
      if (this.stopped) break;
      this.lineNumber++;
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (this.header === undefined) this.readHeader(line);
      else if (line.trim() !== "") {
        const item = this.readRow(line);
        if (item) items.push(item);
      }
    }
    return items;
  }

  private readHeader(line: string): void {
    const header = splitCsvLine(line).map((h) => h.trim().toLowerCase());
    const missing = csvColumns.filter((c) => c !== "description" && !header.includes(c));
    if (missing.length > 0) this.stop(finding("RECON_ENTRY_FIELD_MISSING", `the CSV header lacks ${missing.join(", ")}`, { line: 1 }));
    else this.header = header;
  }

  private readRow(line: string): ExternalItem | undefined {
    if (this.items >= this.limits.rowsMax) {
      this.stop(finding("RECON_ENTRIES_TOO_MANY", `more than ${this.limits.rowsMax} rows`, { line: this.lineNumber }));
      return undefined;
    }
    const header = this.header as string[];
    const row = splitCsvLine(line);
    const item = itemOfRow(this.lineNumber, (name) => (row[header.indexOf(name)] ?? "").trim());
    if (!item.ok) {
      this.addFinding(item.error);
      return undefined;
    }
    this.items++;
    return item.value;
  }

  private addFinding(f: Finding): void {
    if (this.findings.length < this.limits.findingsMax) this.findings.push(f);
  }

  private stop(f: Finding): void {
    this.stopped = true;
    this.findings.push(f);
  }
}

function itemOfRow(line: number, field: (name: string) => string): { ok: true; value: ExternalItem } | { ok: false; error: Finding } {
  const id = field("id");
  const date = field("date");
  const amountText = field("amount");
  const currency = field("currency").toUpperCase();
  if (!id || !date || !amountText || !currency) return { ok: false, error: finding("RECON_ENTRY_FIELD_MISSING", "a row needs id, date, amount and currency", { line }) };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return { ok: false, error: finding("RECON_ENTRY_FIELD_INVALID", `date ${date.slice(0, 20)} is not YYYY-MM-DD`, { line, field: "date" }) };
  const negative = amountText.startsWith("-");
  const amount = decimalToMinor(negative || amountText.startsWith("+") ? amountText.slice(1) : amountText, currency, { line, field: "amount" });
  if (!amount.ok) return { ok: false, error: amount.error };
  const reference = taggedRef("ref", field("reference"));
  const description = field("description");
  return {
    ok: true,
    value: {
      itemKey: `csv:${id}`, position: `line ${line}`, bookingDate: date, direction: negative ? "D" : "C", amountMinor: amount.value, currency,
      status: "booked", refs: reference ? [reference] : [], parts: [], ...(description ? { description } : {}),
    },
  };
}

/** One CSV line into fields (RFC 4180 quoting within a line). */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { current += '"'; i++; } else if (c === '"') quoted = false; else current += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { fields.push(current); current = ""; } else current += c;
  }
  fields.push(current);
  return fields;
}
