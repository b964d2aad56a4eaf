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

export interface ExternalRead {
  format: ExternalFormat;
  head: ExternalStatementHead;
  findings: Finding[];        // errors and warnings, in the order found
}

/**
 * Reads an external file item by item, handing the items to `onItems` in batches of at most
 * `batchItemsMax` as they are read, so that a large statement is never held as one array of
 * items: a camt document is parsed as a stream; CSV and ACH totals are read whole (their items
 * are rows and batch totals) and handed on in batches. Errors are findings of the result: the
 * caller refuses the file (and undoes what it did with the batches) when there is any.
 */
export async function readExternalItems(
  content: Buffer, format: ExternalFormat | undefined, bounds: typeof reconLimits, batchItemsMax: number, onItems: (items: ExternalItem[]) => Promise<void>,
): Promise<Result<ExternalRead, Finding[]>> {
  if (content.length > bounds.fileBytesMax) return fail([finding("RECON_ENTRIES_TOO_MANY", `the file exceeds ${bounds.fileBytesMax} bytes`, { byteOffset: bounds.fileBytesMax })]);
  const chosen = format ?? detectExternalFormat(content);
  if (!chosen) return fail([finding("RECON_FORMAT_UNKNOWN", "the file is neither camt.053/054 XML, a NACHA file, nor a CSV with an amount column", {})]);
  if (chosen === "camt053" || chosen === "camt054") return ok({ format: chosen, ...(await readCamt(content, bounds, batchItemsMax, onItems)) });
  const read: { items: ExternalItem[]; findings: Finding[]; head?: ExternalStatementHead } =
    chosen === "csv" ? readExternalCsv(content.toString("utf8"), bounds.itemsMax) : readAchTotals(content, bounds.itemsMax);
  for (let start = 0; start < read.items.length; start += batchItemsMax) await onItems(read.items.slice(start, start + batchItemsMax));
  return ok({ format: chosen, head: read.head ?? {}, findings: read.findings });
}

/** Reads a whole external file into items; any error-severity finding refuses it. */
export async function readExternalFile(content: Buffer, format: ExternalFormat | undefined, bounds: typeof reconLimits): Promise<Result<ExternalFile, Finding[]>> {
  const items: ExternalItem[] = [];
  const read = await readExternalItems(content, format, bounds, bounds.insertBatchItemsMax, async (batch) => { items.push(...batch); });
  if (!read.ok) return read;
  const errors = read.value.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return fail(errors);
  return ok({ format: read.value.format, items, head: read.value.head, warnings: read.value.findings.filter((f) => f.severity !== "error") });
}

async function readCamt(
  content: Buffer, bounds: typeof reconLimits, batchItemsMax: number, onItems: (items: ExternalItem[]) => Promise<void>,
): Promise<{ findings: Finding[]; head: ExternalStatementHead }> {
  const reader = new CamtStatementReader({ itemsMax: bounds.itemsMax, partsPerItemMax: bounds.partsPerItemMax, findingsMax: bounds.findingsMax });
  let batch: ExternalItem[] = [];
  let findings: Finding[] = [];
  let head: ExternalStatementHead = {};
  const take = async (events: ReturnType<CamtStatementReader["push"]>): Promise<void> => {
    for (const event of events) {
      if (event.type === "item") batch.push(event.item);
      else { findings = event.findings; head = event.head; }
    }
    if (batch.length >= batchItemsMax) {
      await onItems(batch);
      batch = [];
    }
  };
  const CHUNK_BYTES = 65_536;
  for (let start = 0; start < content.length && !reader.stopped; start += CHUNK_BYTES) await take(reader.push(content.subarray(start, start + CHUNK_BYTES)));
  await take(reader.finish());
  if (batch.length > 0) await onItems(batch);
  return { findings, head };
}
