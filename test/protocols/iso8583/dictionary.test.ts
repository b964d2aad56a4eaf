import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import {
  dictionaryByName, iso87AsciiDictionary as ascii, iso87BinaryDictionary as binary, loadDictionary, pack, parseDictionary, unpack,
  type Dictionary,
} from "../../../src/protocols/iso8583/index.ts";

const loadDictionaryOrFail = (raw: unknown): Dictionary => loadDictionary(raw);

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

describe("BCD alignment and pad nibble per field", () => {
  const pan = (extra: Record<string, unknown>) => loadDictionaryOrFail({
    name: "bcd", mti: { encoding: "bcd" }, bitmap: { encoding: "binary", bitmapsMax: 1 },
    fields: { "2": { name: "primaryAccountNumber", type: "n", length: 19, prefix: "LL", prefixEncoding: "bcd", encoding: "bcd", ...extra } },
  });
  const panBytes = (extra: Record<string, unknown>): string => {
    const packed = pack({ mti: "0200", fields: { 2: "4761739001010119123" } }, pan(extra));
    if (!packed.ok) expect.fail(packed.error.message);
    return packed.value.subarray(11).toString("hex").toUpperCase();
  };

  it("right aligned (the default) puts the pad nibble first", () => {
    expect(panBytes({})).toBe("04761739001010119123");
  });

  it("left aligned puts it last, 0 or F as the field says, and reads back only with that nibble", () => {
    expect(panBytes({ bcdAlign: "left" })).toBe("47617390010101191230");
    expect(panBytes({ bcdAlign: "left", bcdPad: "F" })).toBe("4761739001010119123F");
    expect(panBytes({ bcdAlign: "right", bcdPad: "F" })).toBe("F4761739001010119123");
    const wire = Buffer.from("0200" + "4000000000000000" + "19" + "4761739001010119123F", "hex");
    expect(unpack(wire, pan({ bcdAlign: "left", bcdPad: "F" }))).toMatchObject({ ok: true, value: { fields: { 2: "4761739001010119123" } } });
    expect(unpack(wire, pan({ bcdAlign: "left" }))).toMatchObject({ ok: false, error: { code: "ISO8583_BCD_INVALID" } });
  });

  it("refuses alignment on a field that is not BCD, and values other than left/right and 0/F", () => {
    expect(problemOf({ ...base, fields: { "3": { ...field, bcdAlign: "left" } } })).toMatch(/BCD encodings only/);
    expect(problemOf({ ...base, fields: { "3": { ...field, encoding: "bcd", bcdAlign: "centre" } } })).toMatch(/bcdAlign/);
    expect(problemOf({ ...base, fields: { "3": { ...field, encoding: "bcd", bcdPad: "E" } } })).toMatch(/bcdPad/);
  });
});

describe("dictionaries transcribed from other packagers", () => {
  const jposA = dictionaryByName("jpos-iso87a")!;
  const jposB = dictionaryByName("jpos-iso87b")!;
  const moov = dictionaryByName("moov-spec87ascii")!;

  it("jpos-iso87b: IFB_LLNUM fields (2, 32, 33, 35, 99, 100) left align their digits with a trailing 0 nibble, IFB_NUMERIC right aligns", () => {
    for (const number of [2, 32, 33, 35, 99, 100]) expect(jposB.fields[number]?.bcd).toEqual({ align: "left", padNibble: 0 });
    for (const number of [3, 19, 22, 27, 66, 90]) expect(jposB.fields[number]?.bcd).toEqual({ align: "right", padNibble: 0 });
    expect(jposB.fields[36]).toMatchObject({ prefix: "LLL", prefixEncoding: "bcd", encoding: "ascii" });
    expect(jposB.fields[97]).toMatchObject({ encoding: "sign-bcd", bcd: { align: "left" } });
  });

  it("jpos-iso87a and jpos-iso87b: field 93 is 6 characters and field 96 is 16 bytes, as in jPOS", () => {
    for (const dictionary of [jposA, jposB]) {
      expect(dictionary.fields[93]?.length).toBe(6);
      expect(dictionary.fields[96]?.length).toBe(16);
      for (let number = 2; number <= 128; number++) expect(dictionary.fields[number]?.number).toBe(number);
    }
  });

  it("moov-spec87ascii defines fields 2..64 and 90 only, with a 99-character field 44", () => {
    const defined = moov.fields.flatMap((definition) => (definition === undefined ? [] : [definition.number]));
    expect(defined).toEqual([...Array.from({ length: 63 }, (_, index) => index + 2), 90]);
    expect(moov.fields[44]).toMatchObject({ prefix: "LL", length: 99 });
  });
});
