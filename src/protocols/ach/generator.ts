import { assert } from "../../assert.ts";
import { routingCheckDigit } from "./routing.ts";
import { blockingFactor, layoutNamed, recordLength } from "./layout.ts";
import { encodeFixedWidth } from "./fixed-width.ts";
import { ControlTotals, encodeBatchControl, encodeEntry, encodeFileControl, type AchFieldValues } from "./writer.ts";

export interface GenerateAchOptions {
  entries: number;          // entry detail records in the whole file
  batches?: number;         // default: one batch per 10,000 entries
  seed?: number;            // same seed, same file
  firstTrace?: number;      // trace sequence of the first entry (default 1): files of own keys
  chunkBytesMax?: number;   // size of each yielded Buffer (default 64 KiB)
  lineEnding?: "\n" | "\r\n";
}

/** Small deterministic PRNG (mulberry32): benchmarks and fixtures must be reproducible. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const names = ["ADA LOVELACE", "ALAN TURING", "GRACE HOPPER", "EDSGER DIJKSTRA", "BARBARA LISKOV", "KEN THOMPSON", "DONALD KNUTH", "RADIA PERLMAN"];
const odfi = "09101298";

function unwrap(result: { ok: true; value: string } | { ok: false; error: { message: string } }): string {
  assert(result.ok, `generated record encodes: ${result.ok ? "" : result.error.message}`);
  return result.value;
}

function batchHeaderFields(batchNumber: number): AchFieldValues {
  return {
    serviceClassCode: "200", companyName: "CLEARLINE PAYROL", companyIdentification: "1231380104", standardEntryClassCode: "PPD",
    companyEntryDescription: "PAYROLL", companyDescriptiveDate: "JAN 02", effectiveEntryDate: "250103", originatorStatusCode: "1",
    originatingDfiIdentification: odfi, batchNumber: String(batchNumber),
  };
}

/** One random entry (a credit, or a debit one time in five), drawing from `next` in a fixed order: same seed, same file. */
function entryFields(next: () => number, traceSequence: number): AchFieldValues {
  const rdfi = String(10_000_000 + Math.floor(next() * 89_999_999));
  const debit = next() < 0.2;
  return {
    transactionCode: debit ? "27" : "22",
    receivingDfiIdentification: rdfi,
    checkDigit: routingCheckDigit(rdfi),
    dfiAccountNumber: String(Math.floor(next() * 1e12)),
    // Up to $1,000.00: a million of them still fits the 12-digit file totals.
    amount: String(1 + Math.floor(next() * 100_000)),
    individualIdentificationNumber: `EMP${String(Math.floor(next() * 1e9)).padStart(9, "0")}`,
    individualName: names[Math.floor(next() * names.length)],
    traceNumber: odfi + String(traceSequence).padStart(7, "0"),
  };
}

/**
 * A valid N-entry PPD file (credits and debits, mixed service class 200), produced as a stream of
 * Buffers without ever holding the file: benchmarks feed it to a file or straight to the reader.
 * Record count and so the block count are known in advance, so the file control can be written
 * last without a second pass.
 */
export async function* generateAchFile(options: GenerateAchOptions): AsyncGenerator<Buffer, void, undefined> {
  yield* generateAchChunks(options);
}

export function* generateAchChunks(options: GenerateAchOptions): Generator<Buffer, void, undefined> {
  const entries = options.entries;
  const batches = Math.max(1, Math.min(options.batches ?? Math.ceil(entries / 10_000), Math.max(1, entries)));
  assert(Number.isSafeInteger(entries) && entries >= 0, "entries is a whole number");
  assert(batches <= 9_999_999, "batch numbers fit 7 digits");
  const firstTrace = options.firstTrace ?? 1;
  assert(Number.isSafeInteger(firstTrace) && firstTrace >= 1,
    "the first trace sequence is a positive whole number");
  assert(firstTrace - 1 + entries <= 9_999_999, "trace sequence numbers fit 7 digits");
  const next = random(options.seed ?? 1);
  const eol = options.lineEnding ?? "\n";
  const chunkBytesMax = options.chunkBytesMax ?? 65_536;
  let out: string[] = [];
  let outBytes = 0;
  let recordCount = 0;
  const flush = function* (force: boolean): Generator<Buffer, void, undefined> {
    if (outBytes >= chunkBytesMax || (force && out.length > 0)) {
      yield Buffer.from(out.join(""), "latin1");
      out = [];
      outBytes = 0;
    }
  };
  const push = (line: string) => {
    out.push(line, eol);
    outBytes += line.length + eol.length;
    recordCount++;
  };

  push(unwrap(encodeFixedWidth(layoutNamed("file-header"), {
    priorityCode: "01", immediateDestination: " 091012984", immediateOrigin: " 231380104", fileCreationDate: "250102", fileCreationTime: "0930",
    fileIdModifier: "A", immediateDestinationName: "CLEARLINE BANK", immediateOriginName: "CLEARLINE BENCH",
  })));
  const fileTotals = new ControlTotals();
  const perBatch = Math.floor(entries / batches);
  let written = 0;
  // Trace numbers run across the whole file, as a real ODFI's do: every entry of a generated
  // file has its own natural key (restarting them per batch would be valid NACHA, but a million
  // entries would then share ten thousand keys).
  let trace = firstTrace - 1;
  const lines: string[] = [];
  for (let b = 1; b <= batches; b++) {
    const count = b === batches ? entries - written : perBatch;
    const header = batchHeaderFields(b);
    push(unwrap(encodeFixedWidth(layoutNamed("batch-header"), header)));
    const totals = new ControlTotals();
    for (let i = 1; i <= count; i++) {
      const fields = entryFields(next, ++trace);
      lines.length = 0;
      const encoded = encodeEntry("PPD", { fields }, lines);
      assert(encoded.ok, "generated entry encodes");
      for (const line of lines) push(line);
      totals.addEntry(fields, 0);
      yield* flush(false);
    }
    written += count;
    push(unwrap(encodeBatchControl(header, totals)));
    fileTotals.add(totals);
  }
  const total = recordCount + 1;
  const blockCount = Math.ceil(total / blockingFactor);
  push(unwrap(encodeFileControl(batches, blockCount, fileTotals)));
  const nines = "9".repeat(recordLength);
  while (recordCount % blockingFactor !== 0) push(nines);
  yield* flush(true);
}
