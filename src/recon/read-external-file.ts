import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { readAchTotals } from "../protocols/statement/ach-totals-reader.ts";
import { CamtStatementReader } from "../protocols/statement/camt-reader.ts";
import { readExternalCsv } from "../protocols/statement/csv-reader.ts";
import type { ExternalItem, ExternalStatementHead } from "../protocols/statement/external-item.ts";
import type { reconLimits } from "../config/limits/recon.ts";

export type ExternalFormat = "camt053" | "camt054" | "ach" | "csv";

export interface ExternalFile {
  format: ExternalFormat;
  items: ExternalItem[];
  head: ExternalStatementHead;
  warnings: Finding[];
}

const SNIFF_BYTES = 4_096; // enough to see the root element of a camt document past its header

/** The format from the first bytes: XML (camt.053 or camt.054 by its root), else CSV. */
export function detectExternalFormat(content: Buffer): ExternalFormat | undefined {
  const head = content.subarray(0, SNIFF_BYTES).toString("utf8").trimStart();
  if (head.startsWith("<")) return head.includes("BkToCstmrDbtCdtNtfctn") ? "camt054" : head.includes("BkToCstmrStmt") ? "camt053" : undefined;
  if (/^1\d{2}[ \d]{10}/.test(head) && head.split(/\r?\n/)[0]?.length === 94) return "ach";
  const firstLine = head.split(/\r?\n/)[0]?.toLowerCase() ?? "";
  return firstLine.includes("amount") && firstLine.includes(",") ? "csv" : undefined;
}

/** Reads a whole external file into items; any error-severity finding refuses it. */
export async function readExternalFile(content: Buffer, format: ExternalFormat | undefined, bounds: typeof reconLimits): Promise<Result<ExternalFile, Finding[]>> {
  if (content.length > bounds.fileBytesMax) return fail([finding("RECON_ENTRIES_TOO_MANY", `the file exceeds ${bounds.fileBytesMax} bytes`, { byteOffset: bounds.fileBytesMax })]);
  const chosen = format ?? detectExternalFormat(content);
  if (!chosen) return fail([finding("RECON_FORMAT_UNKNOWN", "the file is neither camt.053/054 XML, a NACHA file, nor a CSV with an amount column", {})]);
  const read: { items: ExternalItem[]; findings: Finding[]; head?: ExternalStatementHead } =
    chosen === "csv" ? readExternalCsv(content.toString("utf8"), bounds.itemsMax)
      : chosen === "ach" ? readAchTotals(content, bounds.itemsMax)
        : readCamt(content, bounds);
  const errors = read.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return fail(errors);
  return ok({ format: chosen, items: read.items, head: read.head ?? {}, warnings: read.findings.filter((f) => f.severity !== "error") });
}

function readCamt(content: Buffer, bounds: typeof reconLimits): { items: ExternalItem[]; findings: Finding[]; head?: ExternalStatementHead } {
  const reader = new CamtStatementReader({ itemsMax: bounds.itemsMax, partsPerItemMax: bounds.partsPerItemMax, findingsMax: bounds.findingsMax });
  const items: ExternalItem[] = [];
  const CHUNK_BYTES = 65_536;
  for (let start = 0; start < content.length && !reader.stopped; start += CHUNK_BYTES) {
    for (const event of reader.push(content.subarray(start, start + CHUNK_BYTES))) if (event.type === "item") items.push(event.item);
  }
  let findings: Finding[] = [];
  let head: ExternalStatementHead = {};
  for (const event of reader.finish()) {
    if (event.type === "item") items.push(event.item);
    else { findings = event.findings; head = event.head; }
  }
  return { items, findings, head };
}
