import { assert } from "../../assert.ts";
import { limits } from "../../config/limits.ts";
import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { iso8583Error } from "./errors.ts";
import type {
  BcdLayout, BitmapEncoding, Composite, Dictionary, FieldDefinition, FieldEncoding, FieldPrefix, FieldType,
  MtiEncoding, PositionalSubfield, PrefixEncoding, Sensitivity,
} from "./types.ts";

/**
 * Dictionaries are data (protocols/iso8583/*.json); this module checks one for consistency and
 * compiles it into the indexed form the codec reads. A shipped dictionary that fails is a bug
 * (loadDictionary asserts); a dictionary an operator supplies is input (parseDictionary returns
 * a finding).
 */

const fieldTypes: readonly FieldType[] = ["n", "a", "an", "ans", "ns", "as", "z", "b", "x+n"];
const prefixes: readonly FieldPrefix[] = ["fixed", "L", "LL", "LLL", "LLLL"];
const prefixEncodings: readonly PrefixEncoding[] = ["ascii", "ebcdic", "bcd", "binary"];
const fieldEncodings: readonly FieldEncoding[] = ["ascii", "ebcdic", "bcd", "bcd-left", "binary", "ascii-hex", "sign-bcd"];
const mtiEncodings: readonly MtiEncoding[] = ["ascii", "ebcdic", "bcd"];
const bitmapEncodings: readonly BitmapEncoding[] = ["hex", "binary"];
const sensitivities: readonly Sensitivity[] = ["pan", "track", "secret"];

// Largest length a prefix of that many decimal digits can state.
export const prefixLengthMax: Readonly<Record<Exclude<FieldPrefix, "fixed">, number>> = { L: 9, LL: 99, LLL: 999, LLLL: 9_999 };

// Which value encodings suit which field types.
const encodingsByType: Readonly<Record<FieldType, readonly FieldEncoding[]>> = {
  n: ["ascii", "ebcdic", "bcd", "bcd-left"],
  z: ["ascii", "ebcdic", "bcd", "bcd-left"],
  "x+n": ["ascii", "ebcdic", "sign-bcd"],
  b: ["binary", "ascii-hex"],
  a: ["ascii", "ebcdic"],
  an: ["ascii", "ebcdic"],
  ans: ["ascii", "ebcdic"],
  ns: ["ascii", "ebcdic"],
  as: ["ascii", "ebcdic"],
};

const fieldNumberMax = 192; // three bitmaps of 64 bits
const namePattern = /^[a-z][A-Za-z0-9]*$/;

class DictionaryProblem {
  constructor(readonly where: string, readonly problem: string) {}
}

function check(condition: unknown, where: string, problem: string): asserts condition {
  if (!condition) throw new DictionaryProblem(where, problem);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], where: string, what: string): T {
  check(typeof value === "string" && (allowed as readonly string[]).includes(value), where, `${what} must be one of ${allowed.join(", ")}`);
  return value as T;
}

function defaultPadding(type: FieldType, encoding: FieldEncoding): string {
  if (encoding === "bcd-left") return "0";
  return type === "n" || type === "x+n" ? "0" : " ";
}

const bcdEncodings: readonly FieldEncoding[] = ["bcd", "bcd-left", "sign-bcd"];

/**
 * A BCD field's alignment and pad nibble: `bcdAlign` ("left" | "right") and `bcdPad` ("0" | "F").
 * Defaults keep the older forms: bcd and sign-bcd right aligned with 0; bcd-left left aligned
 * with its `padding` nibble.
 */
function compileBcdLayout(raw: Record<string, unknown>, encoding: FieldEncoding, padding: string, where: string): BcdLayout | undefined {
  if (!bcdEncodings.includes(encoding)) {
    check(raw.bcdAlign === undefined && raw.bcdPad === undefined, where, "bcdAlign and bcdPad apply to BCD encodings only");
    return undefined;
  }
  const align = raw.bcdAlign === undefined ? (encoding === "bcd-left" ? "left" : "right") : oneOf(raw.bcdAlign, ["left", "right"] as const, where, "bcdAlign");
  const pad = raw.bcdPad === undefined ? (encoding === "bcd-left" ? padding : "0") : oneOf(raw.bcdPad, ["0", "F"] as const, where, "bcdPad");
  return { align, padNibble: pad === "F" ? 0x0f : 0x00 };
}

function compileComposite(raw: unknown, where: string, type: FieldType, prefix: FieldPrefix, length: number): Composite | undefined {
  if (raw === undefined) return undefined;
  check(isRecord(raw), where, "composite must be an object");
  if (raw.kind === "tlv") {
    check(type === "b", where, "a TLV composite must be a b (binary) field");
    return { kind: "tlv" };
  }
  check(raw.kind === "positional", where, "composite kind must be positional or tlv");
  check(prefix === "fixed", where, "a positional composite must be a fixed-length field");
  check(type !== "b", where, "a positional composite must be a character field");
  check(Array.isArray(raw.subfields) && raw.subfields.length > 0, where, "a positional composite needs subfields");
  const names = new Set<string>();
  let total = 0;
  const subfields: PositionalSubfield[] = raw.subfields.map((entry: unknown, index: number) => {
    check(isRecord(entry), `${where}.subfields[${index}]`, "a subfield must be an object");
    check(typeof entry.name === "string" && namePattern.test(entry.name), `${where}.subfields[${index}]`, "subfield name must be camelCase");
    check(!names.has(entry.name), `${where}.subfields[${index}]`, "subfield names must be unique");
    check(Number.isSafeInteger(entry.length) && (entry.length as number) > 0, `${where}.subfields[${index}]`, "subfield length must be a positive integer");
    names.add(entry.name);
    total += entry.length as number;
    return { name: entry.name, length: entry.length as number };
  });
  check(total === length, where, `subfield lengths add up to ${total}, not the field length ${length}`);
  return { kind: "positional", subfields };
}

function compileField(number: number, raw: unknown, bitmapsMax: number): FieldDefinition {
  const where = `fields.${number}`;
  check(isRecord(raw), where, "a field must be an object");
  check(typeof raw.name === "string" && namePattern.test(raw.name), where, "name must be camelCase");
  const type = oneOf(raw.type, fieldTypes, where, "type");
  const prefix = oneOf(raw.prefix, prefixes, where, "prefix");
  const encoding = oneOf(raw.encoding, fieldEncodings, where, "encoding");
  check(encodingsByType[type].includes(encoding), where, `encoding ${encoding} does not suit type ${type}`);
  const length = raw.length;
  check(Number.isSafeInteger(length) && (length as number) > 0, where, "length must be a positive integer");
  check((length as number) <= limits.iso8583.variableFieldLengthMax, where, `length exceeds ${limits.iso8583.variableFieldLengthMax}`);
  let prefixEncoding: PrefixEncoding | undefined;
  if (prefix === "fixed") {
    check(raw.prefixEncoding === undefined, where, "a fixed field has no prefixEncoding");
  } else {
    prefixEncoding = oneOf(raw.prefixEncoding, prefixEncodings, where, "prefixEncoding");
    check((length as number) <= prefixLengthMax[prefix], where, `length exceeds what a ${prefix} prefix can state`);
  }
  if (type === "x+n") check((length as number) >= 2, where, "an x+n field holds a sign and at least one digit");
  const padding = raw.padding ?? defaultPadding(type, encoding);
  check(typeof padding === "string" && padding.length === 1, where, "padding must be one character");
  if (encoding === "bcd-left") check(padding === "0" || padding === "F", where, "bcd-left pads with nibble 0 or F");
  const bcd = compileBcdLayout(raw, encoding, padding, where);
  const sensitive = raw.sensitive === undefined ? undefined : oneOf(raw.sensitive, sensitivities, where, "sensitive");
  check(number <= 64 || bitmapsMax >= 2, where, "a field above 64 needs a secondary bitmap");
  check(number <= 128 || bitmapsMax >= 3, where, "a field above 128 needs a tertiary bitmap");
  check(!(number === 65 && bitmapsMax >= 3), where, "bit 65 announces the tertiary bitmap; it cannot be a field");
  return {
    number, name: raw.name, title: typeof raw.title === "string" ? raw.title : raw.name, type, length: length as number,
    prefix, prefixEncoding, encoding, padding, bcd, sensitive,
    composite: compileComposite(raw.composite, `${where}.composite`, type, prefix, length as number),
  };
}

function compile(raw: unknown): Dictionary {
  check(isRecord(raw), "dictionary", "must be an object");
  check(typeof raw.name === "string" && raw.name.length > 0, "name", "must be a non-empty string");
  check(isRecord(raw.mti), "mti", "must be an object");
  check(isRecord(raw.bitmap), "bitmap", "must be an object");
  check(isRecord(raw.fields), "fields", "must be an object");
  const mtiEncoding = oneOf(raw.mti.encoding, mtiEncodings, "mti", "encoding");
  const bitmapEncoding = oneOf(raw.bitmap.encoding, bitmapEncodings, "bitmap", "encoding");
  const bitmapsMax = raw.bitmap.bitmapsMax;
  check(Number.isSafeInteger(bitmapsMax) && (bitmapsMax as number) >= 1 && (bitmapsMax as number) <= limits.iso8583.bitmapsMax,
    "bitmap", `bitmapsMax must be 1..${limits.iso8583.bitmapsMax}`);
  const fields: (FieldDefinition | undefined)[] = new Array(fieldNumberMax + 1).fill(undefined);
  const fieldNumberByName = new Map<string, number>();
  for (const [key, entry] of Object.entries(raw.fields)) {
    check(/^[1-9]\d*$/.test(key), `fields.${key}`, "field keys are field numbers");
    const number = Number(key);
    check(number >= 2 && number <= fieldNumberMax, `fields.${key}`, "field numbers run 2..192 (bit 1 announces the secondary bitmap)");
    const definition = compileField(number, entry, bitmapsMax as number);
    check(!fieldNumberByName.has(definition.name), `fields.${key}`, `name ${definition.name} is used twice`);
    fieldNumberByName.set(definition.name, number);
    fields[number] = definition;
  }
  return {
    name: raw.name,
    title: typeof raw.title === "string" ? raw.title : raw.name,
    mti: { encoding: mtiEncoding },
    bitmap: { encoding: bitmapEncoding, bitmapsMax: bitmapsMax as number },
    fields,
    fieldNumberByName,
  };
}

/** Checks an operator-supplied dictionary; the finding names the first inconsistency. */
export function parseDictionary(raw: unknown): Result<Dictionary, Finding> {
  try {
    return ok(compile(raw));
  } catch (error) {
    if (!(error instanceof DictionaryProblem)) throw error;
    return fail(iso8583Error("ISO8583_DICTIONARY_INVALID", `dictionary ${error.where}: ${error.problem}`, undefined, 0));
  }
}

/** Compiles a dictionary that ships with clearline: an inconsistency is a bug, so it asserts. */
export function loadDictionary(raw: unknown): Dictionary {
  const parsed = parseDictionary(raw);
  assert(parsed.ok, parsed.ok ? "" : parsed.error.message);
  return parsed.value;
}
