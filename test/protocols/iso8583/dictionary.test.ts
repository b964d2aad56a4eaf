import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import {
  dictionaryByName, iso87AsciiDictionary as ascii, iso87BinaryDictionary as binary, parseDictionary,
} from "../../../src/protocols/iso8583/index.ts";

const field = { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "ascii" };
const base = { name: "t", mti: { encoding: "ascii" }, bitmap: { encoding: "hex", bitmapsMax: 2 } };

function problemOf(raw: unknown): string {
  const parsed = parseDictionary(raw);
  if (parsed.ok) expect.fail("expected the dictionary to be refused");
  expect(parsed.error.code).toBe("ISO8583_DICTIONARY_INVALID");
  return parsed.error.message;
}

describe("shipped dictionaries", () => {
  it("ISO 8583:1987 ASCII defines fields 2..128 with ASCII MTI, hex bitmap and ASCII prefixes", () => {
    expect(ascii.mti.encoding).toBe("ascii");
    expect(ascii.bitmap).toEqual({ encoding: "hex", bitmapsMax: 2 });
    for (let number = 2; number <= 128; number++) expect(ascii.fields[number]?.number).toBe(number);
    expect(ascii.fields.filter((definition) => definition?.prefixEncoding !== undefined).every((definition) => definition?.prefixEncoding === "ascii")).toBe(true);
  });

  it("ISO 8583:1987 binary encodes numerics as BCD and its bitmap in binary", () => {
    expect(binary.mti.encoding).toBe("bcd");
    expect(binary.bitmap.encoding).toBe("binary");
    expect(binary.fields[4]?.encoding).toBe("bcd");
    expect(binary.fields[52]?.encoding).toBe("binary");
  });

  it("are found by name", () => {
    expect(dictionaryByName("iso87-ascii")).toBe(ascii);
    expect(dictionaryByName("iso87-binary")).toBe(binary);
    expect(dictionaryByName("nope")).toBeUndefined();
  });

  it("find field numbers by their standard names", () => {
    expect(ascii.fieldNumberByName.get("systemTraceAuditNumber")).toBe(11);
    expect(ascii.fieldNumberByName.get("originalDataElements")).toBe(90);
  });

  it("mark card data fields sensitive", () => {
    expect([2, 35, 45, 52, 55].map((number) => ascii.fields[number]?.sensitive)).toEqual(["pan", "track", "track", "secret", "secret"]);
  });
});

describe("dictionary consistency", () => {
  it("accepts a minimal dictionary", () => {
    expect(parseDictionary({ ...base, fields: { "3": field } }).ok).toBe(true);
  });

  it("refuses a field length one past the longest variable length", () => {
    const lengthMax = limits.iso8583.variableFieldLengthMax;
    expect(parseDictionary({ ...base, fields: { "48": { ...field, type: "ans", prefix: "LLLL", prefixEncoding: "ascii", length: lengthMax } } }).ok).toBe(true);
    expect(problemOf({ ...base, fields: { "48": { ...field, type: "ans", prefix: "LLLL", prefixEncoding: "ascii", length: lengthMax + 1 } } })).toContain("length exceeds");
  });

  it("refuses a length a prefix cannot state", () => {
    expect(problemOf({ ...base, fields: { "2": { ...field, prefix: "LL", prefixEncoding: "ascii", length: 100 } } })).toContain("LL prefix");
  });

  it("refuses bitmapsMax one past the limit", () => {
    expect(problemOf({ ...base, bitmap: { encoding: "hex", bitmapsMax: limits.iso8583.bitmapsMax + 1 }, fields: {} })).toContain("bitmapsMax");
  });

  it("refuses an encoding that does not suit the type", () => {
    expect(problemOf({ ...base, fields: { "3": { ...field, type: "ans", encoding: "bcd" } } })).toContain("does not suit");
  });

  it("refuses a variable field without a prefix encoding", () => {
    expect(problemOf({ ...base, fields: { "2": { ...field, prefix: "LL" } } })).toContain("prefixEncoding");
  });

  it("refuses field 1, which is the secondary-bitmap bit", () => {
    expect(problemOf({ ...base, fields: { "1": field } })).toContain("2..192");
  });

  it("refuses field 65 when bit 65 announces the tertiary bitmap", () => {
    expect(problemOf({ ...base, bitmap: { encoding: "hex", bitmapsMax: 3 }, fields: { "65": field } })).toContain("tertiary");
  });

  it("refuses a field above 64 without a secondary bitmap", () => {
    expect(problemOf({ ...base, bitmap: { encoding: "hex", bitmapsMax: 1 }, fields: { "70": field } })).toContain("secondary");
  });

  it("refuses positional subfields that do not add up to the field length", () => {
    const composite = { kind: "positional", subfields: [{ name: "a", length: 4 }, { name: "b", length: 1 }] };
    expect(problemOf({ ...base, fields: { "3": { ...field, composite } } })).toContain("add up");
  });

  it("refuses a TLV composite on a character field", () => {
    expect(problemOf({ ...base, fields: { "3": { ...field, composite: { kind: "tlv" } } } })).toContain("TLV");
  });

  it("refuses two fields with one name", () => {
    expect(problemOf({ ...base, fields: { "3": field, "4": field } })).toContain("twice");
  });
});
