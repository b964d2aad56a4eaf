import type { Iso20022Finding } from "./types.ts";
import { fileFinding } from "./extract-fields.ts";

export interface GuardLimits {
  fileBytesMax: number;
  elementTextBytesMax: number;
}

const doctypeMarkers = [Buffer.from("<!DOCTYPE"), Buffer.from("<!doctype")];
const markerBytesMax = 9;
const lessThan = 0x3c;
const greaterThan = 0x3e;

function firstDelimiter(chunk: Uint8Array & Buffer): number {
  const a = chunk.indexOf(lessThan);
  const b = chunk.indexOf(greaterThan);
  if (a < 0) return b;
  if (b < 0) return a;
  return Math.min(a, b);
}

/**
 * Byte-level checks made BEFORE the XML tokenizer sees a byte: a DOCTYPE (the door to external
 * entities and entity expansion) is refused outright, the file size is bounded, and so is any run
 * of bytes between markup delimiters (which the tokenizer would otherwise buffer whole).
 */
export class InputGuard {
  bytesSeen = 0;
  private runBytes = 0;
  private tail: Buffer = Buffer.alloc(0);

  constructor(private readonly limits: GuardLimits) {}

  check(chunk: Buffer): Iso20022Finding | undefined {
    const offset = this.bytesSeen;
    this.bytesSeen += chunk.length;
    if (this.bytesSeen > this.limits.fileBytesMax) {
      return fileFinding("INPUT_TOO_LARGE", `the file exceeds ${this.limits.fileBytesMax} bytes`, { byteOffset: this.limits.fileBytesMax });
    }
    // The tail of the previous chunk catches a marker split across two chunks.
    const window = this.tail.length > 0 ? Buffer.concat([this.tail, chunk.subarray(0, markerBytesMax)]) : undefined;
    for (const marker of doctypeMarkers) {
      const at = chunk.indexOf(marker);
      const split = window ? window.indexOf(marker) : -1;
      if (at >= 0 || split >= 0) {
        return fileFinding("ISO20022_DOCTYPE_REFUSED", "a <!DOCTYPE> is refused: no DTD, no entity declarations", { byteOffset: at >= 0 ? offset + at : offset - this.tail.length + split });
      }
    }
    this.tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - (markerBytesMax - 1))));
    const first = firstDelimiter(chunk);
    if (first < 0) {
      this.runBytes += chunk.length;
    } else {
      this.runBytes += first;
      if (this.runBytes > this.limits.elementTextBytesMax) return this.runTooLong(offset + first);
      this.runBytes = chunk.length - 1 - Math.max(chunk.lastIndexOf(lessThan), chunk.lastIndexOf(greaterThan));
    }
    if (this.runBytes > this.limits.elementTextBytesMax) return this.runTooLong(offset + chunk.length);
    return undefined;
  }

  private runTooLong(byteOffset: number): Iso20022Finding {
    return fileFinding("ISO20022_ELEMENT_TEXT_TOO_LONG", `more than ${this.limits.elementTextBytesMax} bytes of text, attribute or comment without markup`, { byteOffset });
  }
}
