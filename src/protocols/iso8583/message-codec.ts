import { limits } from "../../config/limits.ts";
import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { deferToGeneric, readAsciiText, writeAsciiText } from "./ascii-text.ts";
import { decodeEbcdic, ebcdicByteOf } from "./ebcdic.ts";
import { iso8583Error } from "./errors.ts";
import { latin1Slice, packField, unpackField, type FieldWriter } from "./field-codec.ts";
import { fieldPlansOf } from "./field-plan.ts";
import type { Dictionary, FieldValue, Message } from "./types.ts";

/**
 * A whole message: MTI, bitmaps, then the fields the bitmaps announce in ascending order. Unpack
 * returns a message only when every byte was accounted for; pack writes into a scratch buffer and
 * hands out a copy only when every field fitted, so neither direction is ever half done.
 */

export interface CodecOptions {
  messageBytesMax?: number;
  tlvElementsMax?: number;
}

const bitmapBits = 64;

function isFourDigits(text: string): boolean {
  if (text.length !== 4) return false;
  for (let i = 0; i < 4; i++) {
    const char = text.charCodeAt(i);
    if (char < 0x30 || char > 0x39) return false;
  }
  return true;
}

function mtiBytes(dictionary: Dictionary): number {
  return dictionary.mti.encoding === "bcd" ? 2 : 4;
}

function bitmapBytes(dictionary: Dictionary): number {
  return dictionary.bitmap.encoding === "hex" ? 16 : 8;
}

function readMti(bytes: Buffer, dictionary: Dictionary): string | undefined {
  let text: string;
  switch (dictionary.mti.encoding) {
    case "ascii": text = latin1Slice(bytes, 0, 4); break;
    case "ebcdic": text = decodeEbcdic(bytes, 0, 4); break;
    case "bcd": text = bytes.toString("hex", 0, 2); break;
  }
  return isFourDigits(text) ? text : undefined;
}

const hexValue = (byte: number): number =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x41 && byte <= 0x46
      ? byte - 0x37
      : byte >= 0x61 && byte <= 0x66
        ? byte - 0x57
        : -1;

/**
 * Reads one 8-byte bitmap into `into` at `at`; false when a hex bitmap holds a non-hex character.
 */
function readBitmap(
  bytes: Buffer, offset: number, dictionary: Dictionary, into: Uint8Array, at: number,
): boolean {
  if (dictionary.bitmap.encoding === "binary") {
    for (let i = 0; i < 8; i++) into[at + i] = bytes[offset + i] as number;
    return true;
  }
  for (let i = 0; i < 8; i++) {
    const high = hexValue(bytes[offset + 2 * i] as number);
    const low = hexValue(bytes[offset + 2 * i + 1] as number);
    if (high < 0 || low < 0) return false;
    into[at + i] = (high << 4) | low;
  }
  return true;
}

const isBitSet = (bitmap: Uint8Array, fieldNumber: number): boolean =>
  (((bitmap[(fieldNumber - 1) >> 3] as number) >> (7 - ((fieldNumber - 1) & 7))) & 1) === 1;

/**
 * The first bit of each bitmap announces the next one (bit 1: secondary, bit 65: tertiary, bit
 * 129: a fourth, which no dictionary allows). Bit 65 is an ordinary field when the dictionary
 * stops at two bitmaps, as ISO 8583:1987 packagers usually do.
 */
function isBitmapIndicator(fieldNumber: number, bitmapsMax: number): boolean {
  return fieldNumber === 1 || fieldNumber === 129 || (fieldNumber === 65 && bitmapsMax >= 3);
}

function announcesNextBitmap(bitmap: Uint8Array, bitmapCount: number, bitmapsMax: number): boolean {
  const indicator = (bitmapCount - 1) * bitmapBits + 1;
  return isBitmapIndicator(indicator, bitmapsMax) && isBitSet(bitmap, indicator);
}

// Unpack is synchronous, so one bitmap buffer serves every call.
const unpackBitmap = new Uint8Array(8 * limits.iso8583.bitmapsMax);

/** Strict reading (the endpoint's rules): the first problem refuses the whole message. */
export function unpack(
  input: Uint8Array, dictionary: Dictionary, options: CodecOptions = {},
): Result<Message, Finding> {
  return unpackMessage(input, dictionary, options, undefined);
}

/**
 * Tolerant reading, for traces: a field whose content breaks its rule (a fee without its C/D
 * sign, EMV bytes that are not BER-TLV, a wrong BCD pad nibble, a length over the maximum) is kept
 * as raw hex in `rawFields` with a warning finding naming its field and offset, and reading goes
 * on with the next field. What leaves the length unknown (a bad prefix, a truncated message, a
 * field the dictionary lacks) still stops the reading: there is no next field to go on to.
 */
export interface TolerantRead {
  message: Message;                                // fields that decoded under their rules
  // fields kept raw (uppercase hex; sensitive ones masked)
  rawFields: Readonly<Record<number, string>>;
  findings: readonly Finding[];                    // one warning per raw field, in field order
}

export function unpackTolerant(
  input: Uint8Array, dictionary: Dictionary, options: CodecOptions = {},
): Result<TolerantRead, Finding> {
  const tolerance: Tolerance = { rawFields: {}, findings: [] };
  const message = unpackMessage(input, dictionary, options, tolerance);
  if (!message.ok) return message;
  return ok({
    message: message.value, rawFields: tolerance.rawFields, findings: tolerance.findings,
  });
}

interface Tolerance {
  rawFields: Record<number, string>;
  findings: Finding[];
}

/**
 * Reads the bitmaps after the MTI into unpackBitmap: how many there are and where the fields start,
 * or the finding.
 */
function readBitmaps(
  bytes: Buffer, mtiLength: number, dictionary: Dictionary,
): { bitmapCount: number; offset: number } | Finding {
  const bitmapLength = bitmapBytes(dictionary);
  const bitmapsMax = dictionary.bitmap.bitmapsMax;
  const bitmap = unpackBitmap.fill(0);
  let offset = mtiLength;
  let bitmapCount = 0;
  for (;;) {
    if (offset + bitmapLength > bytes.length) {
      return iso8583Error(
        "ISO8583_MESSAGE_TRUNCATED", "message ends inside a bitmap", ["1"], offset,
      );
    }
    if (!readBitmap(bytes, offset, dictionary, bitmap, bitmapCount * 8)) {
      return iso8583Error(
        "ISO8583_BITMAP_INVALID", "a hex bitmap holds a non-hex character", ["1"], offset,
      );
    }
    offset += bitmapLength;
    bitmapCount++;
    if (!announcesNextBitmap(bitmap, bitmapCount, bitmapsMax)) return { bitmapCount, offset };
    if (bitmapCount === bitmapsMax) {
      return iso8583Error(
        "ISO8583_BITMAP_TOO_MANY",
        `bitmap ${bitmapCount} announces another, beyond the ${bitmapsMax} the dictionary allows`,
        ["1"], offset - bitmapLength,
      );
    }
  }
}

/**
 * The 32 bits of unpackBitmap that announce fields 32 * word + 1 .. 32 * word + 32, bit 31 first.
 */
function bitmapWord(word: number): number {
  const at = word * 4;
  return (
    ((unpackBitmap[at] as number) << 24) |
    ((unpackBitmap[at + 1] as number) << 16) |
    ((unpackBitmap[at + 2] as number) << 8) |
    (unpackBitmap[at + 3] as number)
  );
}

/**
 * The highest field number unpackBitmap announces, 0 when it announces none (bitmap indicators are
 * not fields).
 */
function highestAnnouncedField(bitmapCount: number, bitmapsMax: number): number {
  for (let word = bitmapCount * 2 - 1; word >= 0; word--) {
    const bits = bitmapWord(word);
    if (bits === 0) continue;
    // the lowest set bit is the highest field
    const fieldNumber = word * 32 + Math.clz32(bits & -bits) + 1;
    return isBitmapIndicator(fieldNumber, bitmapsMax) ? 0 : fieldNumber;
  }
  return 0;
}

/**
 * Reads the fields unpackBitmap announces, from `offset`, into `fields`; returns the offset past
 * the last one, or the finding. A field with an ASCII text plan takes the fast path first
 * (ascii-text.ts); whatever that path does not accept is read by the generic field codec.
 */
function readFields(
  bytes: Buffer, offset: number, bitmapCount: number, dictionary: Dictionary,
  tlvElementsMax: number, tolerance: Tolerance | undefined, fields: Record<number, FieldValue>,
): number | Finding {
  const bitmapsMax = dictionary.bitmap.bitmapsMax;
  const plans = fieldPlansOf(dictionary);
  const end = bytes.length;
  // the whole message as latin1, made once when the first ASCII text field needs it
  let text: string | undefined;
  // The highest field stored first sizes the object's element storage once: V8 grows the elements
  // of a plain object in a runtime call per store past their end, which cost as much as the fields'
  // decoding. The placeholder is always overwritten (or removed, for a raw field) or the read
  // fails.
  const highest = highestAnnouncedField(bitmapCount, bitmapsMax);
  if (highest !== 0) fields[highest] = "";
  for (let word = 0; word < bitmapCount * 2; word++) {
    let bits = bitmapWord(word);
    while (bits !== 0) {
      const bit = Math.clz32(bits);
      bits ^= 1 << (31 - bit);
      const fieldNumber = word * 32 + bit + 1;
      if (isBitmapIndicator(fieldNumber, bitmapsMax)) continue;
      const plan = plans[fieldNumber];
      if (plan !== undefined) {
        if (text === undefined) text = latin1Slice(bytes, 0, end);
        const next = readAsciiText(plan, bytes, text, offset, end, fields);
        if (next !== deferToGeneric) {
          offset = next;
          continue;
        }
      }
      const definition = dictionary.fields[fieldNumber];
      if (definition === undefined) {
        return iso8583Error(
          "ISO8583_FIELD_UNDEFINED",
          `bitmap announces field ${fieldNumber}, which dictionary ${dictionary.name} does not ` +
          `define`,
          [String(fieldNumber)], offset,
        );
      }
      const read = unpackField(
        definition, bytes, offset, end, tlvElementsMax, tolerance !== undefined,
      );
      if ("code" in read) return read;
      if (read.raw === true && tolerance !== undefined) {
        tolerance.rawFields[fieldNumber] = read.value as string;
        if (read.finding !== undefined) tolerance.findings.push(read.finding);
        if (fieldNumber === highest) Reflect.deleteProperty(fields, fieldNumber);
      } else {
        fields[fieldNumber] = read.value;
      }
      offset = read.next;
    }
  }
  return offset;
}

function unpackMessage(
  input: Uint8Array, dictionary: Dictionary, options: CodecOptions,
  tolerance: Tolerance | undefined,
): Result<Message, Finding> {
  const messageBytesMax = options.messageBytesMax ?? limits.iso8583.messageBytesMax;
  const tlvElementsMax = options.tlvElementsMax ?? limits.iso8583.tlvElementsMax;
  if (input.length > messageBytesMax) {
    return fail(
      iso8583Error(
        "ISO8583_MESSAGE_TOO_LARGE", `message of ${input.length} bytes exceeds ${messageBytesMax}`,
        undefined, messageBytesMax,
      ),
    );
  }
  const bytes = Buffer.isBuffer(input)
    ? input
    : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const end = bytes.length;
  const mtiLength = mtiBytes(dictionary);
  if (end < mtiLength) {
    return fail(iso8583Error("ISO8583_MESSAGE_TRUNCATED", "message ends inside its MTI", ["0"], 0));
  }
  const mti = readMti(bytes, dictionary);
  if (mti === undefined) {
    return fail(
      iso8583Error(
        "ISO8583_MTI_INVALID", "MTI is not four decimal digits", ["0"], 0,
        bytes.toString("hex", 0, mtiLength).toUpperCase(),
      ),
    );
  }
  const header = readBitmaps(bytes, mtiLength, dictionary);
  if ("code" in header) return fail(header);

  const fields: Record<number, FieldValue> = {};
  const offset = readFields(
    bytes, header.offset, header.bitmapCount, dictionary, tlvElementsMax, tolerance, fields,
  );
  if (typeof offset !== "number") return fail(offset);
  if (offset !== end) {
    return fail(
      iso8583Error(
        "ISO8583_MESSAGE_TRAILING_BYTES", `${end - offset} bytes follow the last field`, undefined,
        offset,
      ),
    );
  }
  const bitmapCount = header.bitmapCount;
  let neededBitmaps = 1;
  for (let fieldNumber = bitmapCount * bitmapBits; fieldNumber > 64; fieldNumber--) {
    if (fields[fieldNumber] !== undefined) {
      neededBitmaps = fieldNumber > 128 ? 3 : 2;
      break;
    }
  }
  return ok(bitmapCount > neededBitmaps ? { mti, fields, bitmapCount } : { mti, fields });
}

const fieldNumberMax = 192; // three bitmaps of 64 bits

// The canonical key of each field number ("2", not "02" or "2.0"), compared without allocating.
const fieldKeys: readonly string[] = Array.from({ length: 193 }, (_, fieldNumber) =>
  String(fieldNumber),
);

// Pack is synchronous, so one scratch buffer serves every call; the result is a copy of its used
// part.
let scratch = Buffer.allocUnsafe(limits.iso8583.messageBytesMax);
let scratchView = scratch;
let scratchBytes = new Uint8Array(scratch.buffer, scratch.byteOffset, scratch.length);

function writeMti(out: Buffer, mti: string, dictionary: Dictionary): void {
  switch (dictionary.mti.encoding) {
    case "ascii": for (let i = 0; i < 4; i++) out[i] = mti.charCodeAt(i); break;
    case "ebcdic": for (let i = 0; i < 4; i++) out[i] = ebcdicByteOf(mti.charCodeAt(i)); break;
    case "bcd": out.write(mti, 0, "hex"); break;
  }
}

function writeBitmaps(
  out: Buffer, offset: number, bitmap: Uint8Array, count: number, dictionary: Dictionary,
): void {
  if (dictionary.bitmap.encoding === "binary") {
    out.set(bitmap.subarray(0, count * 8), offset);
    return;
  }
  for (let i = 0; i < count * 8; i++) {
    const byte = bitmap[i] as number;
    out[offset + 2 * i] = upperHexDigits[byte >> 4] as number;
    out[offset + 2 * i + 1] = upperHexDigits[byte & 0x0f] as number;
  }
}

const upperHexDigits = Buffer.from("0123456789ABCDEF", "latin1");

// Pack is synchronous, so one list of field numbers and one bitmap serve every call too. A
// dictionary defines fields 2..192 at most, each key once, so 192 entries always suffice.
const packFieldNumbers = new Uint8Array(192);
const packBitmap = new Uint8Array(8 * limits.iso8583.bitmapsMax);

/**
 * The message's field numbers, ascending, into packFieldNumbers: how many, or the finding for a key
 * the dictionary lacks. Object.keys would spell every key out as a string (a third of what pack
 * cost); counting the values and probing the field numbers in order finds the same set whenever
 * every key is a defined field number holding a value. Anything else (a key such as "02" or "x",
 * an undefined field, a key holding undefined) leaves the counts apart, and the keys are then
 * read one by one to name the key at fault exactly as before.
 */
function collectFieldNumbers(fields: Message["fields"], dictionary: Dictionary): number | Finding {
  const count = Object.values(fields).length;
  let found = 0;
  for (let fieldNumber = 2; fieldNumber <= fieldNumberMax && found < count; fieldNumber++) {
    if (fields[fieldNumber] === undefined) continue;
    if (dictionary.fields[fieldNumber] === undefined) break;
    packFieldNumbers[found++] = fieldNumber;
  }
  return found === count ? count : collectFieldNumbersByKey(fields, dictionary);
}

function collectFieldNumbersByKey(fields: object, dictionary: Dictionary): number | Finding {
  const fieldNumbers = packFieldNumbers;
  let count = 0;
  let ascending = true;
  for (const key of Object.keys(fields)) {
    const fieldNumber = Number(key);
    const definition = fieldKeys[fieldNumber] === key ? dictionary.fields[fieldNumber] : undefined;
    if (definition === undefined) {
      return iso8583Error(
        "ISO8583_FIELD_UNDEFINED", `dictionary ${dictionary.name} defines no field ${key.slice(0, 8)}`,
        [key.slice(0, 8)], 0,
      );
    }
    if (count > 0 && fieldNumber < (fieldNumbers[count - 1] as number)) ascending = false;
    fieldNumbers[count++] = fieldNumber;
  }
  // Integer keys iterate in ascending order already; the sort keeps that a checked fact, not an
  // accident.
  if (!ascending) fieldNumbers.subarray(0, count).sort();
  return count;
}

/**
 * Sets into packBitmap the indicator bit of each bitmap after the first and the bit of each field.
 */
function buildBitmap(fieldCount: number, bitmapCount: number): Uint8Array {
  const bitmap = packBitmap.fill(0);
  for (let i = 1; i < bitmapCount; i++) {
    const indicator = (i - 1) * bitmapBits + 1;
    bitmap[(indicator - 1) >> 3] =
      (bitmap[(indicator - 1) >> 3] as number) | (0x80 >> ((indicator - 1) & 7));
  }
  for (let i = 0; i < fieldCount; i++) {
    const fieldNumber = packFieldNumbers[i] as number;
    bitmap[(fieldNumber - 1) >> 3] =
      (bitmap[(fieldNumber - 1) >> 3] as number) | (0x80 >> ((fieldNumber - 1) & 7));
  }
  return bitmap;
}

export function pack(
  message: Message, dictionary: Dictionary, options: CodecOptions = {},
): Result<Buffer, Finding> {
  const messageBytesMax = options.messageBytesMax ?? limits.iso8583.messageBytesMax;
  const tlvElementsMax = options.tlvElementsMax ?? limits.iso8583.tlvElementsMax;
  if (typeof message.mti !== "string" || !isFourDigits(message.mti)) {
    return fail(iso8583Error("ISO8583_MTI_INVALID", "MTI must be four decimal digits", ["0"], 0));
  }
  if (typeof message.fields !== "object" || message.fields === null) {
    return fail(
      iso8583Error(
        "ISO8583_FIELD_VALUE_INVALID", "fields must be an object keyed by field number", undefined,
        0,
      ),
    );
  }
  const fieldCount = collectFieldNumbers(message.fields, dictionary);
  if (typeof fieldCount !== "number") return fail(fieldCount);
  const highest = fieldCount === 0 ? 0 : (packFieldNumbers[fieldCount - 1] as number);
  const requested = message.bitmapCount ?? 1;
  if (
    !Number.isSafeInteger(requested) || requested < 1 || requested > dictionary.bitmap.bitmapsMax
  ) {
    return fail(
      iso8583Error(
        "ISO8583_BITMAP_TOO_MANY", `bitmapCount must be 1..${dictionary.bitmap.bitmapsMax}`, ["1"],
        0,
      ),
    );
  }
  const bitmapCount = Math.max(requested, highest > 128 ? 3 : highest > 64 ? 2 : 1);
  const bitmap = buildBitmap(fieldCount, bitmapCount);
  if (scratch.length < messageBytesMax) {
    scratch = Buffer.allocUnsafe(messageBytesMax);
    scratchBytes = new Uint8Array(scratch.buffer, scratch.byteOffset, scratch.length);
  }
  if (scratchView.length !== messageBytesMax) scratchView = scratch.subarray(0, messageBytesMax);
  const writer: FieldWriter = { buffer: scratchView, offset: 0 };
  const headerBytes = mtiBytes(dictionary) + bitmapCount * bitmapBytes(dictionary);
  if (headerBytes > messageBytesMax) {
    return fail(
      iso8583Error(
        "ISO8583_MESSAGE_TOO_LARGE", `MTI and bitmaps exceed ${messageBytesMax} bytes`, undefined,
        0,
      ),
    );
  }
  writeMti(writer.buffer, message.mti, dictionary);
  writeBitmaps(writer.buffer, mtiBytes(dictionary), bitmap, bitmapCount, dictionary);
  writer.offset = headerBytes;
  const problem = writeFields(message.fields, fieldCount, dictionary, writer, tlvElementsMax);
  if (problem !== undefined) return fail(problem);
  const packed = Buffer.allocUnsafe(writer.offset);
  // a plain Uint8Array view: Buffer's own subarray and copy cost twice as much
  packed.set(scratchBytes.subarray(0, writer.offset));
  return ok(packed);
}

/**
 * Writes the fields in order at writer.offset. A string value of a field with an ASCII text plan
 * takes the fast path first (ascii-text.ts); whatever that path does not accept, the generic field
 * codec writes or refuses with its finding.
 */
function writeFields(
  fields: Message["fields"], fieldCount: number, dictionary: Dictionary, writer: FieldWriter,
  tlvElementsMax: number,
): Finding | undefined {
  const plans = fieldPlansOf(dictionary);
  for (let i = 0; i < fieldCount; i++) {
    const fieldNumber = packFieldNumbers[i] as number;
    const value = fields[fieldNumber]!;
    const plan = plans[fieldNumber];
    if (plan !== undefined && typeof value === "string") {
      const next = writeAsciiText(plan, value, writer.buffer, writer.offset);
      if (next !== deferToGeneric) {
        writer.offset = next;
        continue;
      }
    }
    const problem = packField(dictionary.fields[fieldNumber]!, value, writer, tlvElementsMax);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
