import { limits } from "../../config/limits.ts";
import { LineSplitter } from "./line-splitter.ts";
import type { AchEntry, AchEvent, AchReadLimits, AchReadOptions, AchRecord, AchSummary } from "./types.ts";
import { AchValidator } from "./validator.ts";

export type AchInput = Uint8Array | string | AsyncIterable<Uint8Array | string>;

function readLimits(options: AchReadOptions): AchReadLimits {
  const { fileBytesMax, lineBytesMax, findingsMax, entryFindingsMax, addendaPerEntryMax } = limits.ach;
  return { fileBytesMax, lineBytesMax, findingsMax, entryFindingsMax, addendaPerEntryMax, ...options.limits };
}

function toBytes(chunk: Uint8Array | string): Uint8Array {
  return typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk;
}

/**
 * Push parser: bytes in (any chunking), events out through a callback, synchronously. The
 * building block of both the streaming reader and the whole-buffer one.
 */
export class AchParser {
  private readonly splitter: LineSplitter;
  private readonly validator: AchValidator;

  constructor(onEvent: (event: AchEvent) => void, options: AchReadOptions = {}) {
    const bounds = readLimits(options);
    const validator = new AchValidator(bounds, onEvent, options);
    this.validator = validator;
    this.splitter = new LineSplitter(bounds,
      (line, text) => validator.line(line, text),
      (p) => validator.report(p.code, "file", p.severity, p.message, p.column === undefined ? { line: p.line } : { line: p.line, column: p.column }));
  }

  push(chunk: Uint8Array | string): void {
    this.splitter.push(toBytes(chunk));
  }

  /** True once the size bound was hit: the caller may stop feeding bytes. */
  get stopped(): boolean {
    return this.splitter.stopped;
  }

  finish(): AchSummary {
    this.splitter.finish();
    this.validator.lastPhysicalLine = this.splitter.linesRead;
    return this.validator.finish();
  }
}

/**
 * Streaming reader: a Buffer or a stream of chunks (a file stream) in, typed events out one at a
 * time, in bounded memory whatever the file size (at most one chunk's events are queued). The
 * last event is always `{ type: "end", summary }`. Never throws on bad input: every problem is a
 * finding with its line.
 */
export async function* readAch(input: AchInput, options: AchReadOptions = {}): AsyncGenerator<AchEvent, void, undefined> {
  const queue: AchEvent[] = [];
  const parser = new AchParser((event) => queue.push(event), options);
  if (typeof input === "string" || input instanceof Uint8Array) {
    parser.push(input);
  } else {
    for await (const chunk of input) {
      parser.push(chunk);
      for (const event of queue) yield event;
      queue.length = 0;
      if (parser.stopped) break;
    }
  }
  parser.finish();
  for (const event of queue) yield event;
}

/** Validation only: the summary (findings, counts, totals) without keeping any record. */
export async function validateAch(input: AchInput, options: AchReadOptions = {}): Promise<AchSummary> {
  // Events are dropped as they come: no per-record await on this path.
  const parser = new AchParser(() => undefined, options);
  if (typeof input === "string" || input instanceof Uint8Array) {
    parser.push(input);
  } else {
    for await (const chunk of input) {
      parser.push(chunk);
      if (parser.stopped) break;
    }
  }
  return parser.finish();
}

export interface AchBatch {
  ordinal: number;
  header: AchRecord;
  entries: AchEntry[];
  control?: AchRecord;
  rejected: boolean;
}

export interface AchParsedFile {
  fileHeader?: AchRecord;
  batches: AchBatch[];
  fileControl?: AchRecord;
  summary: AchSummary;
}

/** Whole-buffer entry point: the file as a tree, for small files, fixtures, inspect and the writer. */
export function parseAch(bytes: Uint8Array | string, options: AchReadOptions = {}): AchParsedFile {
  const batches: AchBatch[] = [];
  const parsed: Omit<AchParsedFile, "summary"> = { batches };
  // Events of a batch arrive while it is the last one opened.
  const batchNumbered = (ordinal: number) => (batches.at(-1)?.ordinal === ordinal ? batches.at(-1) : undefined);
  const parser = new AchParser((event) => {
    switch (event.type) {
      case "fileHeader": parsed.fileHeader = event.record; break;
      case "batchHeader": batches.push({ ordinal: event.batchOrdinal, header: event.record, entries: [], rejected: false }); break;
      case "entry": batchNumbered(event.entry.batchOrdinal)?.entries.push(event.entry); break;
      case "batchControl": {
        const batch = batchNumbered(event.batchOrdinal);
        if (batch) {
          if (event.record) batch.control = event.record;
          batch.rejected = event.batchRejected;
        }
        break;
      }
      case "fileControl": parsed.fileControl = event.record; break;
      case "end": break;
    }
  }, options);
  parser.push(bytes);
  const summary = parser.finish();
  return { ...parsed, summary };
}
