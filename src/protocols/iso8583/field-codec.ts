import type { Finding } from "../../errors/finding.ts";
import { decodeEbcdic, ebcdicByteOf } from "./ebcdic.ts";
import { iso8583Error } from "./errors.ts";
import { alwaysSensitiveFields, maskForError, maskText } from "./masking.ts";
import { buildTlv, parseTlv, type TlvProblem } from "./tlv.ts";
import type {
  FieldDefinition, FieldEncoding, FieldPrefix, FieldValue, PrefixEncoding, Sensitivity, Subfields,
  TlvElement,
} from "./types.ts";

/**
 * One field on the wire: an optional length prefix, then the value in its encoding. Reading
 * checks every byte before it builds a value; writing checks the value before it writes a byte.
 */

export interface FieldRead {
  value: FieldValue;
  next: number;      // offset just past the field
  raw?: true;        // tolerant reading only: the value is the field's raw bytes in hex
  finding?: Finding; // tolerant reading only: why the field was read raw
}

const digitsByPrefix: Readonly<Record<Exclude<FieldPrefix, "fixed">, number>> = {
  L: 1, LL: 2, LLL: 3, LLLL: 4,
};

export function prefixBytes(prefix: FieldPrefix, encoding: PrefixEncoding | undefined): number {
  if (prefix === "fixed") return 0;
  const digits = digitsByPrefix[prefix];
  switch (encoding) {
    case "ascii":
    case "ebcdic": return digits;
    case "bcd": return Math.ceil(digits / 2);
    case "binary": return digits <= 2 ? 1 : 2;
    case undefined: return 0;
  }
}

/** Bytes a value of `length` units (characters, digits or bytes) takes in `encoding`. */
export function bodyBytes(encoding: FieldEncoding, length: number): number {
  switch (encoding) {
    case "ascii":
    case "ebcdic":
    case "binary": return length;
    case "bcd":
    case "bcd-left": return (length + 1) >> 1;
    case "ascii-hex": return length * 2;
    case "sign-bcd": return 1 + (length >> 1); // one sign byte, then ceil((length - 1) / 2)
  }
}

const digit0 = 0x30;

/**
 * Buffer's own latin1 decoder without toString's argument handling: measured here at about half
 * the cost per short field, which is most of what unpack does.
 */
export function latin1Slice(bytes: Buffer, start: number, end: number): string {
  return (bytes as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(
    start, end,
  );
}
const isDigitByte = (byte: number): boolean => byte >= 0x30 && byte <= 0x39;

/** The length a prefix states, or -1 when it is not a valid number in its encoding. */
function readPrefix(
  bytes: Uint8Array, offset: number, width: number, encoding: PrefixEncoding,
): number {
  let length = 0;
  for (let i = offset; i < offset + width; i++) {
    const byte = bytes[i] as number;
    if (encoding === "binary") {
      length = length * 256 + byte;
    } else if (encoding === "bcd") {
      const high = byte >> 4;
      const low = byte & 0x0f;
      if (high > 9 || low > 9) return -1;
      length = length * 100 + high * 10 + low;
    } else {
      const digit = encoding === "ascii" ? byte - digit0 : byte - 0xf0;
      if (digit < 0 || digit > 9) return -1;
      length = length * 10 + digit;
    }
  }
  return length;
}

function writePrefix(
  out: Buffer, offset: number, width: number, encoding: PrefixEncoding, length: number,
): void {
  let rest = length;
  for (let i = offset + width - 1; i >= offset; i--) {
    if (encoding === "binary") {
      out[i] = rest & 0xff;
      rest >>= 8;
    } else if (encoding === "bcd") {
      out[i] = ((Math.floor(rest / 10) % 10) << 4) | (rest % 10);
      rest = Math.floor(rest / 100);
    } else {
      out[i] = (encoding === "ascii" ? digit0 : 0xf0) + (rest % 10);
      rest = Math.floor(rest / 10);
    }
  }
}

function fieldPathOf(definition: FieldDefinition, sub?: string): string[] {
  return sub === undefined ? [String(definition.number)] : [String(definition.number), sub];
}

function isHexByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) ||
    (byte >= 0x61 && byte <= 0x66)
  );
}

/** BCD digits from `count` nibbles; `padFirst`: the pad nibble leads (right aligned) or trails. */
function readBcd(
  bytes: Uint8Array, start: number, count: number, padFirst: boolean, padNibble: number,
  track: boolean,
): string | undefined {
  const nibbles = ((count + 1) >> 1) * 2;
  const padded = nibbles !== count;
  let text = "";
  for (let n = 0; n < nibbles; n++) {
    const byte = bytes[start + (n >> 1)] as number;
    const nibble = (n & 1) === 0 ? byte >> 4 : byte & 0x0f;
    const isPad = padded && (padFirst ? n === 0 : n === nibbles - 1);
    if (isPad) {
      if (nibble !== padNibble) return undefined;
    } else if (nibble <= 9) {
      text += String.fromCharCode(digit0 + nibble);
    } else if (track && nibble === 0x0d) {
      text += "="; // track 2 field separator, written as nibble D in BCD
    } else {
      return undefined;
    }
  }
  return text;
}

function writeBcd(
  out: Buffer, start: number, text: string, padFirst: boolean, padNibble: number,
): void {
  const nibbles = ((text.length + 1) >> 1) * 2;
  const padded = nibbles !== text.length;
  let index = 0;
  for (let n = 0; n < nibbles; n++) {
    const isPad = padded && (padFirst ? n === 0 : n === nibbles - 1);
    let nibble = padNibble;
    if (!isPad) {
      const char = text.charCodeAt(index++);
      nibble = char === 0x3d ? 0x0d : char - digit0;
    }
    const at = start + (n >> 1);
    out[at] = (n & 1) === 0 ? nibble << 4 : (out[at] as number) | nibble;
  }
}

function invalidCharacter(
  definition: FieldDefinition, offset: number, text: string, what: string,
): Finding {
  return iso8583Error(
    "ISO8583_FIELD_INVALID_CHARACTER", `field ${definition.number} (${definition.name}): ${what}`,
    fieldPathOf(definition), offset, maskForError(text, definition.sensitive),
  );
}

/**
 * Type rules on decoded text: n is digits, x+n is a C/D sign then digits; other types take any
 * character of their encoding. ASCII text fields are first tried by ascii-text.ts, which must
 * refuse whatever these rules refuse.
 */
function typeProblem(definition: FieldDefinition, text: string): string | undefined {
  // A NUL byte in a text field (DE 41, 42, 43...) could never be stored or echoed from the
  // database.
  if (definition.type !== "b" && text.includes("\u0000")) {
    return "a text field holds a NUL character (U+0000), which cannot be stored";
  }
  if (definition.type === "n") {
    for (let i = 0; i < text.length; i++)
      if (!isDigitByte(text.charCodeAt(i))) return "a numeric field holds a non-digit";
  } else if (definition.type === "x+n") {
    const sign = text.charCodeAt(0);
    if (sign !== 0x43 && sign !== 0x44) return "an amount must start with its sign C or D";
    for (let i = 1; i < text.length; i++)
      if (!isDigitByte(text.charCodeAt(i))) return "an amount holds a non-digit after its sign";
  }
  return undefined;
}

function tlvError(definition: FieldDefinition, problem: TlvProblem, byteOffset: number): Finding {
  const code = problem.tooMany === true ? "ISO8583_TLV_TOO_MANY_ELEMENTS" : "ISO8583_TLV_INVALID";
  return iso8583Error(code, `field ${definition.number} (${definition.name}): ${problem.reason}`,
    fieldPathOf(definition, problem.tag), byteOffset);
}

/**
 * How far a field reaches: its length prefix read and checked against the message's end. A
 * length over the field's maximum is a finding, but the extent is still known (tolerant reading
 * goes on past it); a bad prefix or a truncated message leaves nothing to go on.
 */
interface FieldExtent {
  bodyStart: number;
  bodyEnd: number;
  length: number;        // units the prefix states (or the fixed length)
  tooLong?: Finding;     // the stated length exceeds the field's maximum
}

function fieldExtent(
  definition: FieldDefinition, bytes: Buffer, offset: number, end: number,
): FieldExtent | Finding {
  let position = offset;
  let length = definition.length;
  let tooLong: Finding | undefined;
  if (definition.prefixEncoding !== undefined) {
    const width = prefixBytes(definition.prefix, definition.prefixEncoding);
    if (position + width > end) {
      return iso8583Error(
        "ISO8583_MESSAGE_TRUNCATED",
        `message ends inside the length prefix of field ${definition.number}`,
        fieldPathOf(definition), position,
      );
    }
    length = readPrefix(bytes, position, width, definition.prefixEncoding);
    if (length < 0) {
      return iso8583Error(
        "ISO8583_FIELD_LENGTH_INVALID",
        `field ${definition.number} (${definition.name}): length prefix is not a ` +
        `${definition.prefixEncoding} number`,
        fieldPathOf(definition), position,
        bytes.toString("hex", position, position + width).toUpperCase(),
      );
    }
    if (length > definition.length) {
      tooLong = iso8583Error(
        "ISO8583_FIELD_TOO_LONG",
        `field ${definition.number} (${definition.name}): length ${length} exceeds ` +
        `${definition.length}`,
        fieldPathOf(definition), position,
      );
    }
    position += width;
  }
  const bodyEnd = position + bodyBytes(definition.encoding, length);
  if (bodyEnd > end) {
    return iso8583Error(
      "ISO8583_MESSAGE_TRUNCATED",
      `message ends inside field ${definition.number} (${definition.name})`,
      fieldPathOf(definition), position,
    );
  }
  return tooLong === undefined
    ? { bodyStart: position, bodyEnd, length }
    : { bodyStart: position, bodyEnd, length, tooLong };
}

/**
 * Reads one field. Strict (the endpoint's rules): any problem is the finding returned. Tolerant
 * (reading traces): a field whose content breaks its rule but whose extent is known comes back
 * as its raw bytes in hex with the finding as a warning, so the caller can go on to the next one.
 */
export function unpackField(
  definition: FieldDefinition, bytes: Buffer, offset: number, end: number, tlvElementsMax: number,
  tolerant = false,
): FieldRead | Finding {
  const extent = fieldExtent(definition, bytes, offset, end);
  if ("code" in extent) return extent;
  if (extent.tooLong !== undefined) {
    return tolerant ? rawRead(definition, bytes, extent, extent.tooLong) : extent.tooLong;
  }
  const read = decodeBody(definition, bytes, extent, tlvElementsMax);
  if (!("code" in read) || !tolerant) return read;
  return rawRead(definition, bytes, extent, read);
}

/**
 * The field as raw hex masked by the field's sensitivity (a PAN keeps BIN and last four, EMV data
 * nothing), and the finding that made it raw: a warning quoting the raw hex as errors quote values.
 */
function sensitivityOf(
  fieldNumber: number, declared: Sensitivity | undefined,
): Sensitivity | undefined {
  return alwaysSensitiveFields[fieldNumber] ?? declared;
}

function rawRead(
  definition: FieldDefinition, bytes: Buffer, extent: FieldExtent, problem: Finding,
): FieldRead {
  const rawHex = bytes.toString("hex", extent.bodyStart, extent.bodyEnd).toUpperCase();
  const finding: Finding = {
    ...problem, severity: "warning", valueMasked: maskForError(rawHex, definition.sensitive),
  };
  return {
    value: maskText(rawHex, sensitivityOf(definition.number, definition.sensitive)),
    next: extent.bodyEnd, raw: true, finding,
  };
}

/** The text of a BCD field (right or left aligned, or led by a C/D sign byte). */
function bcdText(
  definition: FieldDefinition, bytes: Buffer, extent: FieldExtent,
): string | Finding {
  const { bodyStart: position, bodyEnd, length } = extent;
  const layout = definition.bcd!;
  const signed = definition.encoding === "sign-bcd";
  const sign = signed ? (bytes[position] as number) : undefined;
  const digits = signed
    ? readBcd(bytes, position + 1, length - 1, layout.align === "right", layout.padNibble, false)
    : readBcd(
      bytes, position, length, layout.align === "right", layout.padNibble,
      definition.type === "z",
    );
  if (digits === undefined || (signed && sign !== 0x43 && sign !== 0x44)) {
    const why = signed
      ? "not a C/D sign followed by BCD digits"
      : "a nibble is not a decimal digit or the pad nibble is wrong";
    return iso8583Error(
      "ISO8583_BCD_INVALID", `field ${definition.number} (${definition.name}): ${why}`,
      fieldPathOf(definition), position,
      maskForError(bytes.toString("hex", position, bodyEnd).toUpperCase(), definition.sensitive),
    );
  }
  return sign === undefined ? digits : String.fromCharCode(sign) + digits;
}

function decodeBody(
  definition: FieldDefinition, bytes: Buffer, extent: FieldExtent, tlvElementsMax: number,
): FieldRead | Finding {
  const { bodyStart: position, bodyEnd } = extent;
  let text: string;
  switch (definition.encoding) {
    case "ascii": {
      let digitsOnly = true;
      for (let i = position; i < bodyEnd; i++) {
        const byte = bytes[i] as number;
        if (byte >= 0x80) {
          return invalidCharacter(
            definition, i, bytes.toString("hex", position, bodyEnd), "a byte outside 7-bit ASCII",
          );
        }
        if (byte < 0x30 || byte > 0x39) digitsOnly = false;
      }
      text = latin1Slice(bytes, position, bodyEnd);
      if (digitsOnly && definition.composite === undefined && definition.type !== "x+n") {
        return { value: text, next: bodyEnd };
      }
      break;
    }
    case "ebcdic":
      text = decodeEbcdic(bytes, position, bodyEnd);
      break;
    case "bcd":
    case "bcd-left":
    case "sign-bcd": {
      const read = bcdText(definition, bytes, extent);
      if (typeof read !== "string") return read;
      text = read;
      break;
    }
    case "binary":
      text = bytes.toString("hex", position, bodyEnd).toUpperCase();
      break;
    case "ascii-hex": {
      for (let i = position; i < bodyEnd; i++) {
        if (!isHexByte(bytes[i] as number)) {
          return invalidCharacter(definition, i, "", "a binary field holds a non-hex character");
        }
      }
      text = bytes.toString("latin1", position, bodyEnd).toUpperCase();
      break;
    }
  }
  const problem = typeProblem(definition, text);
  if (problem !== undefined) return invalidCharacter(definition, position, text, problem);
  return compositeRead(definition, bytes, extent, text, tlvElementsMax);
}

function compositeRead(
  definition: FieldDefinition, bytes: Buffer, extent: FieldExtent, text: string,
  tlvElementsMax: number,
): FieldRead | Finding {
  const { bodyStart: position, bodyEnd, length } = extent;
  const composite = definition.composite;
  if (composite === undefined) return { value: text, next: bodyEnd };
  if (composite.kind === "positional") {
    const subfields: Record<string, string> = {};
    let at = 0;
    for (const subfield of composite.subfields) {
      subfields[subfield.name] = text.slice(at, at + subfield.length);
      at += subfield.length;
    }
    return { value: subfields, next: bodyEnd };
  }
  const tlvBytes = definition.encoding === "binary" ? bytes : Buffer.from(text, "hex");
  const tlvStart = definition.encoding === "binary" ? position : 0;
  const elements = parseTlv(tlvBytes, tlvStart, tlvStart + length, tlvElementsMax);
  if (!Array.isArray(elements)) {
    const scale = definition.encoding === "ascii-hex" ? 2 : 1;
    return tlvError(
      definition, elements as TlvProblem, position + (elements as TlvProblem).offset * scale,
    );
  }
  return { value: elements, next: bodyEnd };
}

function valueInvalid(
  definition: FieldDefinition, offset: number, what: string, sub?: string,
): Finding {
  return iso8583Error(
    "ISO8583_FIELD_VALUE_INVALID", `field ${definition.number} (${definition.name}): ${what}`,
    fieldPathOf(definition, sub), offset,
  );
}

/** A composite value flattened to the field's text (hex for TLV), or a finding. */
function flatten(
  definition: FieldDefinition, value: FieldValue, offset: number, tlvElementsMax: number,
): string | Finding {
  if (typeof value === "string") {
    if (definition.composite?.kind === "tlv") {
      const bytes = /^(?:[0-9A-Fa-f]{2})*$/.test(value) ? Buffer.from(value, "hex") : undefined;
      if (bytes === undefined) return valueInvalid(definition, offset, "TLV data must be hex");
      const elements = parseTlv(bytes, 0, bytes.length, tlvElementsMax);
      if (!Array.isArray(elements)) return tlvError(definition, elements as TlvProblem, offset);
    }
    return value;
  }
  const composite = definition.composite;
  if (composite === undefined) return valueInvalid(definition, offset, "expected text");
  if (composite.kind === "tlv") {
    if (!Array.isArray(value)) {
      return valueInvalid(definition, offset, "expected a list of { tag, value } elements");
    }
    const hex = buildTlv(value as readonly TlvElement[], tlvElementsMax);
    return typeof hex === "string" ? hex : tlvError(definition, hex, offset);
  }
  if (Array.isArray(value) || typeof value !== "object" || value === null) {
    return valueInvalid(definition, offset, "expected subfields by name");
  }
  const subfieldValues = value as Subfields;
  const known = new Set(composite.subfields.map((subfield) => subfield.name));
  for (const name of Object.keys(subfieldValues)) {
    if (!known.has(name)) {
      return iso8583Error(
        "ISO8583_SUBFIELDS_INVALID", `field ${definition.number}: no subfield named as given`,
        fieldPathOf(definition), offset,
      );
    }
  }
  let text = "";
  for (const subfield of composite.subfields) {
    const part = subfieldValues[subfield.name] ?? "";
    if (typeof part !== "string" || part.length > subfield.length) {
      return iso8583Error(
        "ISO8583_SUBFIELDS_INVALID",
        `field ${definition.number} subfield ${subfield.name}: must be text of at most ` +
        `${subfield.length} characters`,
        fieldPathOf(definition, subfield.name), offset,
      );
    }
    text +=
      definition.type === "n"
        ? part.padStart(subfield.length, "0")
        : part.padEnd(subfield.length, " ");
  }
  return text;
}

/**
 * The units a value takes (characters, digits, or bytes for b), after padding a short fixed value.
 */
export function padded(definition: FieldDefinition, text: string): string {
  if (definition.prefix !== "fixed" || definition.type === "b") return text;
  const units = text.length;
  if (units >= definition.length) return text;
  if (definition.type === "x+n") {
    return text.slice(0, 1) + text.slice(1).padStart(definition.length - 1, "0");
  }
  // A number keeps its value when zeros lead; text keeps its meaning when spaces trail.
  if (definition.type === "n") return text.padStart(definition.length, "0");
  return text.padEnd(definition.length, definition.padding);
}

export interface FieldWriter {
  buffer: Buffer;
  offset: number;
}

/**
 * Writes one field at writer.offset; returns the finding instead when the value or the room does
 * not fit.
 */
export function packField(
  definition: FieldDefinition, value: FieldValue, writer: FieldWriter, tlvElementsMax: number,
): Finding | undefined {
  const offset = writer.offset;
  const flat = flatten(definition, value, offset, tlvElementsMax);
  if (typeof flat !== "string") return flat;
  const text = padded(definition, flat);
  let units = text.length;
  if (definition.type === "b") {
    if (!/^(?:[0-9A-Fa-f]{2})*$/.test(text)) {
      return valueInvalid(definition, offset, "a binary field takes an even number of hex digits");
    }
    units = text.length / 2;
  }
  if (units > definition.length) {
    return iso8583Error(
      "ISO8583_FIELD_TOO_LONG",
      `field ${definition.number} (${definition.name}): length ${units} exceeds ` +
      `${definition.length}`,
      fieldPathOf(definition), offset, maskForError(text, definition.sensitive),
    );
  }
  if (definition.prefix === "fixed" && units !== definition.length) {
    return valueInvalid(
      definition, offset,
      `a fixed field takes exactly ${definition.length} ` +
      `${definition.type === "b" ? "bytes" : "characters"}`,
    );
  }
  // The same type rules unpack applies, so that nothing is packed that a reader refuses (a NUL
  // in a text field was once written and then refused on the way back in).
  if (definition.type !== "b") {
    const problem = typeProblem(definition, text);
    if (problem !== undefined) return invalidCharacter(definition, offset, text, problem);
  }
  const width = prefixBytes(definition.prefix, definition.prefixEncoding);
  const byteCount = bodyBytes(definition.encoding, units);
  if (offset + width + byteCount > writer.buffer.length) {
    return iso8583Error(
      "ISO8583_MESSAGE_TOO_LARGE",
      `field ${definition.number} does not fit in ${writer.buffer.length} bytes`,
      fieldPathOf(definition), offset,
    );
  }
  const out = writer.buffer;
  if (definition.prefixEncoding !== undefined) {
    writePrefix(out, offset, width, definition.prefixEncoding, units);
  }
  const start = offset + width;
  const refused = writeBody(definition, text, out, start, offset);
  if (refused) return refused;
  writer.offset = start + byteCount;
  return undefined;
}

/** Writes a checked field's text at `start` in its encoding; the finding when a byte cannot be. */
function writeBody(
  definition: FieldDefinition, text: string, out: Buffer, start: number, offset: number,
): Finding | undefined {
  switch (definition.encoding) {
    case "ascii":
      for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        if (char >= 0x80) {
          return invalidCharacter(definition, offset, text, "a character outside 7-bit ASCII");
        }
        out[start + i] = char;
      }
      break;
    case "ebcdic":
      for (let i = 0; i < text.length; i++) {
        const byte = ebcdicByteOf(text.charCodeAt(i));
        if (byte < 0) {
          return invalidCharacter(
            definition, offset, text, "a character EBCDIC cp037 cannot encode",
          );
        }
        out[start + i] = byte;
      }
      break;
    case "bcd":
    case "bcd-left": {
      const allowed = definition.type === "z" ? /^[0-9=]*$/ : /^[0-9]*$/;
      if (!allowed.test(text)) {
        return invalidCharacter(definition, offset, text, "BCD takes digits only");
      }
      const layout = definition.bcd!;
      writeBcd(out, start, text, layout.align === "right", layout.padNibble);
      break;
    }
    case "sign-bcd": {
      const layout = definition.bcd!;
      out[start] = text.charCodeAt(0);
      writeBcd(out, start + 1, text.slice(1), layout.align === "right", layout.padNibble);
      break;
    }
    case "binary":
      out.write(text, start, "hex");
      break;
    case "ascii-hex":
      out.write(text.toUpperCase(), start, "latin1");
      break;
  }
  return undefined;
}
