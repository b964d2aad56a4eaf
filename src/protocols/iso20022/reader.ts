import { SaxesParser } from "saxes";
import { assert, InvariantError } from "../../assert.ts";
import { limits as allLimits } from "../../config/limits.ts";
import { DocumentWalker, type WalkerLimits } from "./document-walker.ts";
import { InputGuard, type GuardLimits } from "./input-guard.ts";
import type { Iso20022Event } from "./types.ts";

export type ReaderLimits = WalkerLimits & GuardLimits & { chunkBytes: number };

export interface ReadOptions {
  fileName?: string;
  limits?: Partial<ReaderLimits>;
}

export function readerLimits(overrides: Partial<ReaderLimits> = {}): ReaderLimits {
  const base = allLimits.iso20022;
  const chosen: ReaderLimits = {
    fileBytesMax: base.fileBytesMax, depthMax: base.depthMax, elementTextBytesMax: base.elementTextBytesMax,
    transactionsMax: base.transactionsMax, captureElementsMax: base.captureElementsMax, findingsMax: base.findingsMax,
    chunkBytes: base.chunkBytes, ...overrides,
  };
  // The guard measures runs between delimiters across chunks; a run inside one chunk is caught
  // only if a chunk cannot itself exceed the bound.
  assert(chosen.chunkBytes <= chosen.elementTextBytesMax, "chunkBytes must not exceed elementTextBytesMax");
  return chosen;
}

/**
 * Push-style streaming reader: feed bytes as they arrive, collect the events each push produced.
 * Memory stays bounded by the limits (one transaction subtree at a time), whatever the file size.
 */
export class Iso20022StreamReader {
  private readonly limits: ReaderLimits;
  private readonly guard: InputGuard;
  private readonly walker: DocumentWalker;
  private readonly parser: SaxesParser;
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private events: Iso20022Event[] = [];
  private finished = false;

  constructor(options: ReadOptions = {}) {
    this.limits = readerLimits(options.limits);
    this.guard = new InputGuard(this.limits);
    this.walker = new DocumentWalker(this.limits, (event) => this.events.push(event));
    this.parser = new SaxesParser(options.fileName === undefined ? {} : { fileName: options.fileName });
    const walker = this.walker;
    const parser = this.parser;
    parser.on("xmldecl", (declaration) => {
      if (declaration.encoding !== undefined && !/^utf-?8$/i.test(declaration.encoding)) {
        walker.fatal("ISO20022_ENCODING_UNSUPPORTED", `encoding ${declaration.encoding} is not UTF-8`, { line: parser.line, column: parser.column }, declaration.encoding);
      }
    });
    parser.on("doctype", () => walker.fatal("ISO20022_DOCTYPE_REFUSED", "a <!DOCTYPE> is refused", { line: parser.line, column: parser.column }));
    parser.on("opentag", (tag) => walker.open(tag.name, tag.attributes as Record<string, string>));
    parser.on("text", (text) => walker.text(text));
    parser.on("cdata", (text) => walker.text(text));
    parser.on("closetag", () => walker.close());
    parser.on("error", (error) => {
      walker.fatal("ISO20022_XML_MALFORMED", error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, ""), { line: parser.line, column: parser.column, xmlPath: walker.currentXmlPath });
    });
  }

  get stopped(): boolean {
    return this.walker.stopped;
  }

  push(bytes: Uint8Array): Iso20022Event[] {
    assert(!this.finished, "no push after finish");
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let start = 0; start < buffer.length && !this.walker.stopped; start += this.limits.chunkBytes) {
      const chunk = buffer.subarray(start, start + this.limits.chunkBytes);
      const refused = this.guard.check(chunk);
      if (refused) {
        this.walker.fatal(refused.code, refused.message, refused.position);
        break;
      }
      this.feed(() => this.decoder.decode(chunk, { stream: true }));
    }
    return this.drain();
  }

  finish(): Iso20022Event[] {
    if (this.finished) return this.drain();
    this.finished = true;
    if (!this.walker.stopped && this.guard.bytesSeen === 0) this.walker.fatal("INPUT_EMPTY", "the file is empty", {});
    if (!this.walker.stopped) this.feed(() => this.decoder.decode());
    if (!this.walker.stopped) this.parser.close();
    this.walker.end();
    return this.drain();
  }

  private feed(decode: () => string): void {
    let text: string;
    try {
      text = decode();
    } catch {
      this.walker.fatal("ISO20022_ENCODING_UNSUPPORTED", "the bytes are not valid UTF-8", { byteOffset: this.guard.bytesSeen });
      return;
    }
    try {
      this.parser.write(text);
    } catch (error) {
      // saxes reports through the error handler; anything it still throws is bad input, not a bug of ours.
      if (error instanceof InvariantError) throw error;
      this.walker.fatal("ISO20022_XML_MALFORMED", error instanceof Error ? error.message : String(error), { line: this.parser.line, column: this.parser.column });
    }
  }

  private drain(): Iso20022Event[] {
    const out = this.events;
    this.events = [];
    return out;
  }
}

export type Iso20022Source = Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/**
 * Streams an ISO 20022 file: header, then one transaction at a time, file-scope findings, end.
 * Never throws on bad input: a refusal is a finding followed by `end` with `complete: false`.
 */
export async function* readIso20022(source: Iso20022Source, options: ReadOptions = {}): AsyncGenerator<Iso20022Event> {
  const reader = new Iso20022StreamReader(options);
  if (source instanceof Uint8Array) {
    yield* reader.push(source);
  } else {
    for await (const chunk of source as AsyncIterable<Uint8Array>) {
      yield* reader.push(chunk);
      if (reader.stopped) break;
    }
  }
  yield* reader.finish();
}

/** Whole-buffer convenience (tests, inspect of a small file): every event, in order. */
export function readIso20022Sync(bytes: Uint8Array, options: ReadOptions = {}): Iso20022Event[] {
  const reader = new Iso20022StreamReader(options);
  return [...reader.push(bytes), ...reader.finish()];
}
