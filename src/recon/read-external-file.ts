import { createHash } from "node:crypto";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { AchTotalsReader } from "../protocols/statement/ach-totals-reader.ts";
import { CamtStatementReader } from "../protocols/statement/camt-reader.ts";
import { CsvStatementReader } from "../protocols/statement/csv-reader.ts";
import type { ExternalItem, ExternalStatementHead } from "../protocols/statement/external-item.ts";
import { bufferSource, type StatementSource } from "./statement-source.ts";

export type ExternalFormat = "camt053" | "camt054" | "ach" | "csv";

/** The bounds reading a file keeps to (limits.recon's values in use; a test may narrow one). */
export interface ReadBounds {
  fileBytesMax: number;
  itemsMax: number;
  partsPerItemMax: number;
  findingsMax: number;
  csvLineCharsMax: number;
  insertBatchItemsMax: number;
}

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

/** One pass over a source: its SHA-256 and its format (from its first bytes), holding one chunk at a time. */
export async function statementFingerprintOf(
  source: StatementSource,
): Promise<{ sha256: string; format: ExternalFormat | undefined }> {
  const hash = createHash("sha256");
  const first: Buffer[] = [];
  let firstBytes = 0;
  for await (const chunk of source.chunks()) {
    hash.update(chunk);
    if (firstBytes < SNIFF_BYTES) { first.push(chunk.subarray(0, SNIFF_BYTES - firstBytes)); firstBytes += Math.min(chunk.length, SNIFF_BYTES); }
  }
  return { sha256: hash.digest("hex"), format: detectExternalFormat(Buffer.concat(first)) };
}

export interface ExternalRead {
  format: ExternalFormat;
  head: ExternalStatementHead;
  findings: Finding[];        // errors and warnings, in the order found
  sha256: string;             // of the bytes this read saw (an import compares it with the identity it claimed)
}

/** What every format's reader is to this module: bytes in, items out as they are complete. */
interface ItemReader {
  readonly stopped: boolean;
  push(chunk: Buffer): ExternalItem[];
  finish(): { items: ExternalItem[]; findings: Finding[]; head: ExternalStatementHead };
}

function readerFor(format: ExternalFormat, bounds: ReadBounds): ItemReader {
  if (format === "csv") {
    const csv = new CsvStatementReader({ rowsMax: bounds.itemsMax, lineCharsMax: bounds.csvLineCharsMax, findingsMax: bounds.findingsMax });
    const decoder = new TextDecoder("utf-8"); // a character split across chunks waits for its rest
    return {
      get stopped() { return csv.stopped; },
      push: (chunk) => csv.push(decoder.decode(chunk, { stream: true })),
      finish: () => ({ items: [...csv.push(decoder.decode()), ...csv.finish()], findings: csv.findings, head: {} }),
    };
  }
  if (format === "ach") {
    const ach = new AchTotalsReader(bounds.itemsMax);
    return { get stopped() { return ach.stopped; }, push: (chunk) => ach.push(chunk), finish: () => ({ items: ach.finish(), findings: ach.findings, head: ach.head }) };
  }
  const camt = new CamtStatementReader({ itemsMax: bounds.itemsMax, partsPerItemMax: bounds.partsPerItemMax, findingsMax: bounds.findingsMax });
  const itemsOf = (events: ReturnType<CamtStatementReader["push"]>) => events.flatMap((e) => (e.type === "item" ? [e.item] : []));
  return {
    get stopped() { return camt.stopped; },
    push: (chunk) => itemsOf(camt.push(chunk)),
    finish: () => {
      const events = camt.finish();
      const end = events.find((e) => e.type === "end");
      return { items: itemsOf(events), findings: end?.type === "end" ? end.findings : [], head: end?.type === "end" ? end.head : {} };
    },
  };
}

/**
 * Reads an external file item by item as a stream, handing the items to `onItems` in batches of
 * at most `batchItemsMax` as they are read: what is held is one chunk of bytes, the reader's
 * current entry or line, and one batch, whatever the file's size. Errors are findings of the
 * result: the caller refuses the file (and undoes what it did with the batches) when there is any.
 */
export async function readExternalItems(
  source: StatementSource, format: ExternalFormat | undefined, bounds: ReadBounds, batchItemsMax: number, onItems: (items: ExternalItem[]) => Promise<void>,
): Promise<Result<ExternalRead, Finding[]>> {
  if (source.byteLength > bounds.fileBytesMax) return fail([finding("RECON_ENTRIES_TOO_MANY", `the file exceeds ${bounds.fileBytesMax} bytes`, { byteOffset: bounds.fileBytesMax })]);
  const chosen = format ?? (await statementFingerprintOf(source)).format;
  if (!chosen) return fail([finding("RECON_FORMAT_UNKNOWN", "the file is neither camt.053/054 XML, a NACHA file, nor a CSV with an amount column", {})]);
  const reader = readerFor(chosen, bounds);
  const hash = createHash("sha256");
  let batch: ExternalItem[] = [];
  let bytes = 0;
  const take = async (items: ExternalItem[], last: boolean): Promise<void> => {
    batch.push(...items);
    if (batch.length >= batchItemsMax || (last && batch.length > 0)) {
      await onItems(batch);
      batch = [];
    }
  };
  for await (const chunk of source.chunks()) {
    bytes += chunk.length;
    // A file that grew past the bound after its size was taken is refused where it crossed it.
    if (bytes > bounds.fileBytesMax) return fail([finding("RECON_ENTRIES_TOO_MANY", `the file exceeds ${bounds.fileBytesMax} bytes`, { byteOffset: bounds.fileBytesMax })]);
    hash.update(chunk);
    await take(reader.push(chunk), false);
    if (reader.stopped) break; // refused: the rest is not read (the digest is then partial, and unused)
  }
  const end = reader.finish();
  await take(end.items, true);
  return ok({ format: chosen, head: end.head, findings: end.findings, sha256: hash.digest("hex") });
}

/** Reads a whole external file into items; any error-severity finding refuses it. */
export async function readExternalFile(content: Buffer, format: ExternalFormat | undefined, bounds: ReadBounds): Promise<Result<ExternalFile, Finding[]>> {
  const items: ExternalItem[] = [];
  const read = await readExternalItems(bufferSource(content), format, bounds, bounds.insertBatchItemsMax, async (batch) => { items.push(...batch); });
  if (!read.ok) return read;
  const errors = read.value.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return fail(errors);
  return ok({ format: read.value.format, items, head: read.value.head, warnings: read.value.findings.filter((f) => f.severity !== "error") });
}
