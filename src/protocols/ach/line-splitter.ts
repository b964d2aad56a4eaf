import type { ErrorCode } from "../../errors/catalog.ts";
import { recordLength } from "./layout.ts";

export interface LineProblem {
  code: ErrorCode;
  severity: "error" | "warning";
  line: number;
  column?: number;
  message: string;
}

export interface LineSplitterLimits {
  fileBytesMax: number;
  lineBytesMax: number;
}

const lineFeed = 0x0a;
const carriageReturn = 0x0d;
// NUL is left to the field checks, which refuse it as an error with its field (it cannot be
// stored); any other byte outside printable ASCII is read as Windows-1252 with a warning.
// eslint-disable-next-line no-control-regex -- NUL is excluded on purpose
const notPrintableAscii = /[^\x00\x20-\x7e]/;
const blankLine = /^\s*$/;
// Bytes that start a NACHA record: types 1, 5, 6, 7, 8 and 9.
const recordTypeBytes: readonly number[] = [0x31, 0x35, 0x36, 0x37, 0x38, 0x39];

/**
 * Cuts a byte stream into 94-character NACHA records, whatever the line endings: LF, CRLF, CR or
 * none at all (then the records are consecutive 94-byte chunks). Bytes are read as latin1 so any
 * byte maps to one character (Windows-1252 names from bank systems survive, with a warning).
 * Short lines are padded, long ones trimmed, blank ones skipped: each leniency is reported with
 * its physical line number. Memory is bounded: at most one partial line (lineBytesMax) is kept.
 */
export class LineSplitter {
  private mode: "detect" | "lines" | "chunks" = "detect";
  private separator = lineFeed;
  private pending: Buffer = Buffer.alloc(0);
  private pendingOverflow = false;
  private lineNumber = 0;
  private bytesRead = 0;
  stopped = false;

  constructor(
    private readonly limits: LineSplitterLimits,
    private readonly onLine: (line: number, text: string) => void,
    private readonly onProblem: (problem: LineProblem) => void,
  ) {}

  get linesRead(): number {
    return this.lineNumber;
  }

  push(chunk: Uint8Array): void {
    if (this.stopped || chunk.length === 0) return;
    let buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.bytesRead += buffer.length;
    if (this.bytesRead > this.limits.fileBytesMax) {
      const allowed = buffer.length - (this.bytesRead - this.limits.fileBytesMax);
      buffer = buffer.subarray(0, Math.max(0, allowed));
      this.stopped = true;
      this.onProblem({ code: "INPUT_TOO_LARGE", severity: "error", line: this.lineNumber + 1, message: `the file exceeds ${this.limits.fileBytesMax} bytes; nothing past the bound was read` });
    }
    if (this.mode === "detect") {
      this.pending = this.pending.length === 0 ? Buffer.from(buffer) : Buffer.concat([this.pending, buffer]);
      if (!this.detect(false)) return;
      buffer = this.pending;
      this.pending = Buffer.alloc(0);
    }
    if (this.mode === "lines") this.pushLines(buffer);
    else this.pushChunks(buffer);
  }

  finish(): void {
    if (this.mode === "detect") {
      this.detect(true);
      const rest = this.pending;
      this.pending = Buffer.alloc(0);
      if (this.readsLines()) this.pushLines(rest);
      else this.pushChunks(rest);
    }
    if (this.pending.length > 0) {
      const rest = this.pending;
      this.pending = Buffer.alloc(0);
      if (this.mode === "lines") this.emit(rest, 0, rest.length, this.pendingOverflow);
      else if (!blankLine.test(rest.toString("latin1"))) this.emit(rest, 0, rest.length, false);
    }
  }

  private readsLines(): boolean {
    return this.mode === "lines";
  }

  /** Decides how records are delimited from the first bytes; true once decided. */
  private detect(atEnd: boolean): boolean {
    const window = this.pending.subarray(0, this.limits.lineBytesMax + 1);
    if (window.includes(lineFeed)) {
      this.mode = "lines";
      this.separator = lineFeed;
      return true;
    }
    const cr = window.indexOf(carriageReturn);
    if (cr >= 0 && (cr + 1 < window.length || atEnd)) {
      this.mode = "lines";
      this.separator = carriageReturn;
      return true;
    }
    if (this.pending.length > this.limits.lineBytesMax || (atEnd && this.pending.length > recordLength)) {
      this.mode = "chunks";
      this.onProblem({ code: "ACH_NO_LINE_BREAKS", severity: "warning", line: 1, message: "the file has no line breaks; read as consecutive 94-character records" });
      return true;
    }
    if (atEnd) this.mode = "lines";
    return atEnd;
  }

  /** A line of whole records back to back (a blocked line, or a file whose only break is at its end): every 94th byte starts a record type. */
  private isRecordRun(buffer: Buffer, start: number, end: number): boolean {
    for (let at = start; at < end; at += recordLength) {
      if (!recordTypeBytes.includes(buffer[at] as number)) return false;
    }
    return true;
  }

  /** Records back to back inside one line: each is read as its own record (numbered as records, as without line breaks). */
  private emitRun(buffer: Buffer, start: number, end: number): void {
    this.onProblem({ code: "ACH_NO_LINE_BREAKS", severity: "warning", line: this.lineNumber + 1,
      message: `line ${this.lineNumber + 1} holds ${(end - start) / recordLength} records back to back; read as consecutive 94-character records` });
    const mode = this.mode;
    this.mode = "chunks";
    for (let at = start; at < end; at += recordLength) this.emit(buffer, at, at + recordLength, false);
    this.mode = mode;
  }

  private pushLines(buffer: Buffer): void {
    let start = 0;
    if (this.pending.length > 0 || this.pendingOverflow) {
      const end = buffer.indexOf(this.separator);
      if (end < 0) {
        this.keepPending(buffer, 0);
        return;
      }
      const head = this.pending.length + end > this.limits.lineBytesMax
        ? Buffer.concat([this.pending, buffer.subarray(0, Math.max(0, this.limits.lineBytesMax - this.pending.length))])
        : Buffer.concat([this.pending, buffer.subarray(0, end)]);
      const overflow = this.pendingOverflow || this.pending.length + end > this.limits.lineBytesMax;
      this.pending = Buffer.alloc(0);
      this.pendingOverflow = false;
      this.emit(head, 0, head.length, overflow);
      start = end + 1;
    }
    for (;;) {
      const end = buffer.indexOf(this.separator, start);
      if (end < 0) break;
      const overflow = end - start > this.limits.lineBytesMax;
      this.emit(buffer, start, overflow ? start + this.limits.lineBytesMax : end, overflow);
      start = end + 1;
    }
    if (start < buffer.length) this.keepPending(buffer, start);
  }

  private keepPending(buffer: Buffer, start: number): void {
    const room = this.limits.lineBytesMax - this.pending.length;
    const take = Math.min(room, buffer.length - start);
    if (take > 0) this.pending = Buffer.concat([this.pending, buffer.subarray(start, start + take)]);
    if (buffer.length - start > take) this.pendingOverflow = true;
  }

  private pushChunks(buffer: Buffer): void {
    let start = 0;
    if (this.pending.length > 0) {
      const need = recordLength - this.pending.length;
      if (buffer.length < need) {
        this.pending = Buffer.concat([this.pending, buffer]);
        return;
      }
      const head = Buffer.concat([this.pending, buffer.subarray(0, need)]);
      this.pending = Buffer.alloc(0);
      this.emit(head, 0, head.length, false);
      start = need;
    }
    while (buffer.length - start >= recordLength) {
      this.emit(buffer, start, start + recordLength, false);
      start += recordLength;
    }
    if (start < buffer.length) this.pending = Buffer.from(buffer.subarray(start));
  }

  private emit(buffer: Buffer, start: number, end: number, overflow: boolean): void {
    if (this.mode === "lines" && this.separator === lineFeed && end > start && buffer[end - 1] === carriageReturn) end--;
    const length = end - start;
    if (this.mode === "lines" && !overflow && length > recordLength && length % recordLength === 0 && this.isRecordRun(buffer, start, end)) {
      this.emitRun(buffer, start, end);
      return;
    }
    const line = ++this.lineNumber;
    let text = buffer.toString("latin1", start, end);
    if (overflow) {
      this.onProblem({ code: "ACH_LINE_TOO_LONG", severity: "error", line, message: `line ${line} is longer than ${this.limits.lineBytesMax} bytes; the rest of it was not read` });
    }
    if (blankLine.test(text)) {
      this.onProblem({ code: "ACH_BLANK_LINE", severity: "warning", line, message: `line ${line} is blank; skipped` });
      return;
    }
    const odd = notPrintableAscii.exec(text);
    if (odd) {
      this.onProblem({ code: "ACH_NON_ASCII_CHARACTER", severity: "warning", line, column: odd.index + 1, message: `line ${line} column ${odd.index + 1} holds byte 0x${text.charCodeAt(odd.index).toString(16).padStart(2, "0")}, outside printable ASCII; read as Windows-1252/latin1` });
    }
    if (text.length < recordLength) {
      this.onProblem({ code: "ACH_LINE_SHORT", severity: "warning", line, column: text.length + 1, message: `line ${line} has ${text.length} characters; padded with blanks to 94` });
      text = text.padEnd(recordLength, " ");
    } else if (text.length > recordLength) {
      const excess = text.slice(recordLength);
      const what = blankLine.test(excess) ? "trailing blanks" : `characters ${JSON.stringify(excess.slice(0, 20))}`;
      this.onProblem({ code: "ACH_LINE_LONG", severity: "warning", line, column: recordLength + 1, message: `line ${line} has ${text.length} characters; ${what} past 94 dropped` });
      text = text.slice(0, recordLength);
    }
    this.onLine(line, text);
  }
}
