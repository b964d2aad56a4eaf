import { assert } from "../../assert.ts";
import { limits } from "../../config/limits.ts";
import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { iso8583Error } from "./errors.ts";

/**
 * Framing is its own layer: a length header in front of each message on a TCP stream. The
 * deframer is incremental (a read may hold part of a frame or several frames) and bounded: it
 * never buffers more than one header plus frameBytesMax, because it judges the header before it
 * waits for the body.
 */

// binary-2: 2-byte big-endian length (the default); ascii-4: four ASCII decimal digits;
// bcd-2: four BCD digits in two bytes; vml-4: binary-2 followed by two reserved bytes (Visa).
export type Framing = "binary-2" | "ascii-4" | "bcd-2" | "vml-4";
export const framings: readonly Framing[] = ["binary-2", "ascii-4", "bcd-2", "vml-4"];
export const defaultFraming: Framing = "binary-2";

const headerBytesOf: Readonly<Record<Framing, number>> = { "binary-2": 2, "ascii-4": 4, "bcd-2": 2, "vml-4": 4 };
// Largest length each header can state.
export const framingLengthMax: Readonly<Record<Framing, number>> = { "binary-2": 0xffff, "ascii-4": 9_999, "bcd-2": 9_999, "vml-4": 0xffff };

export function frameHeaderBytes(framing: Framing): number {
  return headerBytesOf[framing];
}

export function isFraming(name: string): name is Framing {
  return (framings as readonly string[]).includes(name);
}

/** The length a header states; `streamOffset` only places the error. */
export function decodeFrameHeader(header: Uint8Array, framing: Framing, streamOffset = 0): Result<number, Finding> {
  const size = headerBytesOf[framing];
  if (header.length < size) {
    return fail(iso8583Error("ISO8583_FRAME_TRUNCATED", `a ${framing} header takes ${size} bytes, ${header.length} present`, undefined, streamOffset));
  }
  const invalid = () => fail(iso8583Error("ISO8583_FRAME_HEADER_INVALID", `not a ${framing} length header`, undefined, streamOffset,
    Buffer.from(header.subarray(0, size)).toString("hex").toUpperCase()));
  switch (framing) {
    case "binary-2":
    case "vml-4": // the two reserved bytes are not checked: senders are known to put flags there
      return ok(((header[0] as number) << 8) | (header[1] as number));
    case "ascii-4": {
      let length = 0;
      for (let i = 0; i < 4; i++) {
        const digit = (header[i] as number) - 0x30;
        if (digit < 0 || digit > 9) return invalid();
        length = length * 10 + digit;
      }
      return ok(length);
    }
    case "bcd-2": {
      let length = 0;
      for (let i = 0; i < 2; i++) {
        const byte = header[i] as number;
        if (byte >> 4 > 9 || (byte & 0x0f) > 9) return invalid();
        length = length * 100 + (byte >> 4) * 10 + (byte & 0x0f);
      }
      return ok(length);
    }
  }
}

export function encodeFrameHeader(length: number, framing: Framing): Result<Buffer, Finding> {
  assert(Number.isSafeInteger(length) && length >= 0, "a frame length is a whole number");
  if (length > framingLengthMax[framing]) {
    return fail(iso8583Error("ISO8583_FRAME_TOO_LARGE", `length ${length} does not fit a ${framing} header`, undefined, 0));
  }
  const header = Buffer.allocUnsafe(headerBytesOf[framing]);
  writeFrameHeader(header, length, framing);
  return ok(header);
}

/** Writes the header of a `length`-byte body at the start of `out`; the caller checked that it fits. */
function writeFrameHeader(out: Buffer, length: number, framing: Framing): void {
  switch (framing) {
    case "binary-2":
      out[0] = length >> 8;
      out[1] = length & 0xff;
      break;
    case "vml-4":
      out[0] = length >> 8;
      out[1] = length & 0xff;
      out[2] = 0; // the two reserved bytes
      out[3] = 0;
      break;
    case "ascii-4":
      out.write(String(length).padStart(4, "0"), 0, "latin1");
      break;
    case "bcd-2":
      out.write(String(length).padStart(4, "0"), 0, "hex");
      break;
  }
}

/**
 * A message with its length header in front, refused above frameBytesMax. Header and body go
 * straight into one new buffer: a header buffer and a concatenation cost more than the codec.
 */
export function frameMessage(body: Uint8Array, framing: Framing = defaultFraming, frameBytesMax: number = limits.iso8583.frameBytesMax): Result<Buffer, Finding> {
  if (body.length > frameBytesMax) {
    return fail(iso8583Error("ISO8583_FRAME_TOO_LARGE", `frame of ${body.length} bytes exceeds ${frameBytesMax}`, undefined, 0));
  }
  if (body.length > framingLengthMax[framing]) {
    return fail(iso8583Error("ISO8583_FRAME_TOO_LARGE", `length ${body.length} does not fit a ${framing} header`, undefined, 0));
  }
  const headerBytes = headerBytesOf[framing];
  const framed = Buffer.allocUnsafe(headerBytes + body.length);
  writeFrameHeader(framed, body.length, framing);
  framed.set(body, headerBytes);
  return ok(framed);
}

export interface DeframeResult {
  frames: Buffer[];           // complete frame bodies, in stream order, each its own copy
  error: Finding | undefined; // once set, the stream is out of step: close the connection
}

export class Deframer {
  private pending: Buffer = Buffer.alloc(0);
  private consumedBytes = 0; // stream offset of pending[0], to place errors
  private failure: Finding | undefined;
  readonly headerBytes: number;

  constructor(readonly framing: Framing = defaultFraming, readonly frameBytesMax: number = limits.iso8583.frameBytesMax) {
    assert(Number.isSafeInteger(frameBytesMax) && frameBytesMax > 0, "frameBytesMax is a positive whole number");
    assert(frameBytesMax <= framingLengthMax[framing], `frameBytesMax must fit a ${framing} header`);
    this.headerBytes = headerBytesOf[framing];
  }

  /** Bytes held waiting for the rest of a frame; never more than one header plus frameBytesMax. */
  get bufferedBytes(): number {
    return this.pending.length;
  }

  push(chunk: Uint8Array): DeframeResult {
    if (this.failure !== undefined) return { frames: [], error: this.failure };
    const data = this.pending.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    let offset = 0;
    while (data.length - offset >= this.headerBytes) {
      const length = decodeFrameHeader(data.subarray(offset, offset + this.headerBytes), this.framing, this.consumedBytes + offset);
      if (!length.ok) return this.fail(frames, length.error);
      if (length.value > this.frameBytesMax) {
        return this.fail(frames, iso8583Error("ISO8583_FRAME_TOO_LARGE", `frame header announces ${length.value} bytes, more than ${this.frameBytesMax}`,
          undefined, this.consumedBytes + offset));
      }
      const frameEnd = offset + this.headerBytes + length.value;
      if (frameEnd > data.length) break;
      frames.push(Buffer.from(data.subarray(offset + this.headerBytes, frameEnd)));
      offset = frameEnd;
    }
    this.consumedBytes += offset;
    this.pending = Buffer.from(data.subarray(offset));
    assert(this.pending.length <= this.headerBytes + this.frameBytesMax, "the deframer holds at most one frame");
    return { frames, error: undefined };
  }

  /** At end of stream: an error when the stream stopped inside a header or a body. */
  finish(): Result<void, Finding> {
    if (this.failure !== undefined) return fail(this.failure);
    if (this.pending.length > 0) {
      return fail(iso8583Error("ISO8583_FRAME_TRUNCATED", `stream ended with ${this.pending.length} bytes of an unfinished frame`, undefined, this.consumedBytes));
    }
    return ok(undefined);
  }

  private fail(frames: Buffer[], error: Finding): DeframeResult {
    this.failure = error;
    this.pending = Buffer.alloc(0);
    return { frames, error };
  }
}

export function createDeframer(framing: Framing = defaultFraming, frameBytesMax: number = limits.iso8583.frameBytesMax): Deframer {
  return new Deframer(framing, frameBytesMax);
}
