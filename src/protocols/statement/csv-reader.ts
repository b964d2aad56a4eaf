import { finding, type Finding } from "../../errors/finding.ts";
import { decimalToMinor } from "../iso4217/currency.ts";
import { taggedRef, type ExternalItem } from "./external-item.ts";

export const csvColumns = ["id", "date", "amount", "currency", "reference", "description"] as const;

/**
 * A plain CSV of external items, for every other side: a header line naming the columns
 * id,date,amount,currency,reference,description (any order; description optional), then one row
 * per item. The amount is a signed decimal from our account's point of view: positive, they
 * credited us; negative, they debited us. Fields may be quoted ("a,b" and "" for a quote).
 */
export function readExternalCsv(text: string, rowsMax: number): { items: ExternalItem[]; findings: Finding[] } {
  const lines = text.split(/\r?\n/);
  const findings: Finding[] = [];
  const header = splitCsvLine(lines[0] ?? "").map((h) => h.trim().toLowerCase());
  const missing = csvColumns.filter((c) => c !== "description" && !header.includes(c));
  if (missing.length > 0) return { items: [], findings: [finding("RECON_ENTRY_FIELD_MISSING", `the CSV header lacks ${missing.join(", ")}`, { line: 1 })] };
  const column = (row: string[], name: string): string => (row[header.indexOf(name)] ?? "").trim();
  const items: ExternalItem[] = [];
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (line.trim() === "") continue;
    if (items.length >= rowsMax) return { items, findings: [...findings, finding("RECON_ENTRIES_TOO_MANY", `more than ${rowsMax} rows`, { line: index + 1 })] };
    const row = splitCsvLine(line);
    const item = itemOfRow(index + 1, (name) => column(row, name));
    if (item.ok) items.push(item.value);
    else findings.push(item.error);
  }
  return { items, findings };
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
