import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import {
  iso87AsciiDictionary as ascii, iso87BinaryDictionary as binary, loadDictionary, pack, unpack, type Message,
} from "../../../src/protocols/iso8583/index.ts";
import { loadFixture } from "./support/fixtures.ts";

const authorization = loadFixture("0100-authorization-request.json");
const authorizationWire = Buffer.from(authorization.wireHex, "hex");
const signOn: Message = { mti: "0800", fields: { 7: "0611080000", 11: "000001", 70: "001" } };

function errorOf<T>(result: { ok: true; value: T } | { ok: false; error: import("../../../src/errors/finding.ts").Finding }) {
  if (result.ok) expect.fail("expected an error, got a value");
  return result.error;
}

/** A small dictionary for encodings the shipped ones do not use. */
function testDictionary(overrides: { mti?: string; bitmap?: object; fields: Record<string, object> }) {
  return loadDictionary({
    name: "test", mti: { encoding: overrides.mti ?? "ascii" }, bitmap: overrides.bitmap ?? { encoding: "hex", bitmapsMax: 2 }, fields: overrides.fields,
  });
}

describe("unpack", () => {
  it("refuses every truncation of a valid message with a typed error, never a partial message", () => {
    for (let length = 0; length < authorizationWire.length; length++) {
      const error = errorOf(unpack(authorizationWire.subarray(0, length), ascii));
      expect(error.code).toBe("ISO8583_MESSAGE_TRUNCATED");
      expect(error.position.byteOffset).toBeLessThanOrEqual(length);
    }
  });

  it("refuses bytes after the last field the bitmap announces", () => {
    const error = errorOf(unpack(Buffer.concat([authorizationWire, Buffer.from("0")]), ascii));
    expect(error.code).toBe("ISO8583_MESSAGE_TRAILING_BYTES");
    expect(error.position.byteOffset).toBe(authorizationWire.length);
  });

  it("refuses a message one byte over messageBytesMax before reading it", () => {
    const messageBytesMax = authorizationWire.length - 1;
    expect(unpack(authorizationWire, ascii, { messageBytesMax: authorizationWire.length }).ok).toBe(true);
    expect(errorOf(unpack(authorizationWire, ascii, { messageBytesMax })).code).toBe("ISO8583_MESSAGE_TOO_LARGE");
  });

  it("refuses a message one byte over the configured limit", () => {
    const oversized = Buffer.alloc(limits.iso8583.messageBytesMax + 1, 0x30);
    expect(errorOf(unpack(oversized, ascii)).code).toBe("ISO8583_MESSAGE_TOO_LARGE");
  });

  it("names the MTI when it is not four digits", () => {
    const error = errorOf(unpack(Buffer.from("01A0" + authorization.wireHex.slice(8), "hex"), ascii));
    expect(error.code).toBe("ISO8583_MTI_INVALID");
    expect(error.position).toMatchObject({ fieldPath: ["0"], byteOffset: 0 });
  });

  it("names the bitmap when a hex bitmap holds a non-hex character", () => {
    const wire = Buffer.from(authorizationWire);
    wire[6] = 0x47; // "G"
    const error = errorOf(unpack(wire, ascii));
    expect(error.code).toBe("ISO8583_BITMAP_INVALID");
    expect(error.position).toMatchObject({ fieldPath: ["1"], byteOffset: 4 });
  });

  it("accepts a lowercase hex bitmap", () => {
    const wire = Buffer.from("0800" + "8220000000000000".toLowerCase() + "0400000000000000" + "0611080000000001001", "latin1");
    expect(unpack(wire, ascii)).toEqual({ ok: true, value: signOn });
  });

  it("names a field the bitmap announces but the dictionary does not define", () => {
    const sparse = testDictionary({ fields: { "3": { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "ascii" } } });
    const error = errorOf(unpack(Buffer.from("0100" + "3000000000000000" + "000000", "latin1"), sparse));
    expect(error.code).toBe("ISO8583_FIELD_UNDEFINED");
    expect(error.position).toMatchObject({ fieldPath: ["4"], byteOffset: 26 });
  });

  it("names the field and offset of a length prefix one past the field's maximum", () => {
    const pan20 = "41111111111111111111";
    const wire = Buffer.from("0100" + "4000000000000000" + "20" + pan20, "latin1");
    const error = errorOf(unpack(wire, ascii));
    expect(error.code).toBe("ISO8583_FIELD_TOO_LONG");
    expect(error.position).toMatchObject({ fieldPath: ["2"], byteOffset: 20 });
  });

  it("accepts a length prefix exactly at the field's maximum", () => {
    const pan19 = "4111111111111111111";
    const message = unpack(Buffer.from("0100" + "4000000000000000" + "19" + pan19, "latin1"), ascii);
    expect(message).toEqual({ ok: true, value: { mti: "0100", fields: { 2: pan19 } } });
  });

  it("names a length prefix that is not a number", () => {
    const error = errorOf(unpack(Buffer.from("0100" + "4000000000000000" + "1X" + "4111", "latin1"), ascii));
    expect(error.code).toBe("ISO8583_FIELD_LENGTH_INVALID");
    expect(error.position).toMatchObject({ fieldPath: ["2"], byteOffset: 20 });
  });

  it("names a numeric field holding a letter, with the value masked", () => {
    const wire = Buffer.from("0100" + "4000000000000000" + "16" + "411111111111111X", "latin1");
    const error = errorOf(unpack(wire, ascii));
    expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
    expect(error.position.fieldPath).toEqual(["2"]);
    expect(error.valueMasked).toBe("411111******111X");
  });

  it("names a NUL byte in a text field, which could not be stored", () => {
    const wire = Buffer.concat([Buffer.from("0100" + "0000000000800000" + "TERM", "latin1"), Buffer.from([0x00]), Buffer.from("001", "latin1")]);
    const error = errorOf(unpack(wire, ascii));
    expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
    expect(error.message).toMatch(/NUL/);
    expect(error.position).toMatchObject({ fieldPath: ["41"] });
  });

  it("names a byte outside 7-bit ASCII in an ASCII field", () => {
    const wire = Buffer.concat([Buffer.from("0100" + "0000000000800000" + "TERM000", "latin1"), Buffer.from([0xc1])]);
    const error = errorOf(unpack(wire, ascii));
    expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
    expect(error.position).toMatchObject({ fieldPath: ["41"], byteOffset: 27 });
  });

  it("names a BCD nibble that is not a digit in the binary dictionary", () => {
    const wire = Buffer.from("0100" + "2000000000000000" + "00000A", "hex"); // field 3 processing code
    const error = errorOf(unpack(wire, binary));
    expect(error.code).toBe("ISO8583_BCD_INVALID");
    expect(error.position).toMatchObject({ fieldPath: ["3"], byteOffset: 10 });
  });

  it("refuses a wrong pad nibble in an odd-length right-aligned BCD field", () => {
    const wire = Buffer.from("0100" + "0000040000000000" + "1051", "hex"); // field 22 n 3, pad nibble must be 0
    expect(errorOf(unpack(wire, binary)).code).toBe("ISO8583_BCD_INVALID");
    expect(unpack(Buffer.from("0100" + "0000040000000000" + "0051", "hex"), binary)).toEqual({ ok: true, value: { mti: "0100", fields: { 22: "051" } } });
  });

  it("refuses a primary bitmap announcing a secondary when the dictionary allows one bitmap", () => {
    const single = testDictionary({ bitmap: { encoding: "hex", bitmapsMax: 1 }, fields: { "3": { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "ascii" } } });
    const error = errorOf(unpack(Buffer.from("0100" + "A000000000000000" + "0000000000000000" + "000000", "latin1"), single));
    expect(error.code).toBe("ISO8583_BITMAP_TOO_MANY");
  });

  it("reads bit 65 as a field when the dictionary stops at two bitmaps", () => {
    const message: Message = { mti: "0800", fields: { 7: "0611080000", 65: "AB" } };
    const packed = pack(message, ascii);
    expect(packed.ok).toBe(true);
    if (!packed.ok) return;
    expect(packed.value.toString("latin1", 4, 36)).toBe("82000000000000008000000000000000");
    expect(unpack(packed.value, ascii)).toEqual({ ok: true, value: message });
  });

  it("keeps an empty secondary bitmap so the message repacks to the same bytes", () => {
    const wire = Buffer.from("0800" + "8220000000000000" + "0000000000000000" + "0611080000000001", "latin1");
    const message = unpack(wire, ascii);
    expect(message).toEqual({ ok: true, value: { mti: "0800", fields: { 7: "0611080000", 11: "000001" }, bitmapCount: 2 } });
    if (!message.ok) return;
    expect(pack(message.value, ascii)).toEqual({ ok: true, value: wire });
  });
});

describe("tertiary bitmap", () => {
  const tertiary = testDictionary({
    bitmap: { encoding: "binary", bitmapsMax: 3 },
    fields: {
      "3": { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "ascii" },
      "70": { name: "networkManagementInformationCode", type: "n", length: 3, prefix: "fixed", encoding: "ascii" },
      "130": { name: "terminalCapabilityProfile", type: "ans", length: 10, prefix: "LL", prefixEncoding: "binary", encoding: "ascii" },
    },
  });

  it("round-trips a field beyond 128 through three bitmaps", () => {
    const message: Message = { mti: "0100", fields: { 3: "000000", 70: "001", 130: "PROFILE" } };
    const packed = pack(message, tertiary);
    expect(packed.ok).toBe(true);
    if (!packed.ok) return;
    expect(packed.value.subarray(4, 28).toString("hex").toUpperCase()).toBe("A000000000000000" + "8400000000000000" + "4000000000000000");
    expect(packed.value.subarray(28).toString("latin1")).toBe("000000001\x07PROFILE");
    expect(unpack(packed.value, tertiary)).toEqual({ ok: true, value: message });
  });

  it("refuses a tertiary bitmap that announces a fourth, one past the limit", () => {
    const wire = Buffer.concat([Buffer.from("0100", "latin1"), Buffer.from("8000000000000000" + "8000000000000000" + "8000000000000000" + "0000000000000000", "hex")]);
    expect(3).toBe(limits.iso8583.bitmapsMax);
    const error = errorOf(unpack(wire, tertiary));
    expect(error.code).toBe("ISO8583_BITMAP_TOO_MANY");
    expect(error.position).toMatchObject({ fieldPath: ["1"], byteOffset: 20 });
  });
});

describe("encodings", () => {
  const ebcdic = testDictionary({
    mti: "ebcdic",
    fields: {
      "2": { name: "primaryAccountNumber", type: "n", length: 19, prefix: "LL", prefixEncoding: "ebcdic", encoding: "ebcdic" },
      "42": { name: "cardAcceptorIdentificationCode", type: "ans", length: 15, prefix: "fixed", encoding: "ebcdic" },
    },
  });

  it("writes MTI, length prefix and text in EBCDIC cp037", () => {
    const packed = pack({ mti: "0100", fields: { 2: "4111111111111111", 42: "ABC" } }, ebcdic);
    expect(packed.ok).toBe(true);
    if (!packed.ok) return;
    expect(packed.value.subarray(0, 4).toString("hex").toUpperCase()).toBe("F0F1F0F0");
    expect(packed.value.subarray(20, 22).toString("hex").toUpperCase()).toBe("F1F6");
    expect(packed.value.subarray(-15).toString("hex").toUpperCase()).toBe("C1C2C3" + "40".repeat(12));
    expect(unpack(packed.value, ebcdic)).toEqual({ ok: true, value: { mti: "0100", fields: { 2: "4111111111111111", 42: "ABC            " } } });
  });

  it("refuses to write a character cp037 cannot encode", () => {
    expect(errorOf(pack({ mti: "0100", fields: { 42: "\u20ac" } }, ebcdic)).code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
  });

  it("writes a left-aligned BCD value with its trailing pad nibble", () => {
    const leftAligned = testDictionary({ mti: "bcd", bitmap: { encoding: "binary", bitmapsMax: 1 },
      fields: { "2": { name: "primaryAccountNumber", type: "n", length: 19, prefix: "LL", prefixEncoding: "bcd", encoding: "bcd-left", padding: "F" } } });
    const packed = pack({ mti: "0100", fields: { 2: "123" } }, leftAligned);
    expect(packed.ok && packed.value.toString("hex").toUpperCase()).toBe("0100" + "4000000000000000" + "03" + "123F");
  });

  it("writes an LLLL binary length prefix in two bytes", () => {
    const wide = testDictionary({ fields: { "48": { name: "additionalDataPrivate", type: "ans", length: 9999, prefix: "LLLL", prefixEncoding: "binary", encoding: "ascii" } } });
    const text = "x".repeat(300);
    const packed = pack({ mti: "0100", fields: { 48: text } }, wide);
    expect(packed.ok && packed.value.subarray(20, 22).toString("hex")).toBe("012c");
    if (packed.ok) expect(unpack(packed.value, wide)).toEqual({ ok: true, value: { mti: "0100", fields: { 48: text } } });
  });
});

describe("pack", () => {
  it("pads a short fixed numeric field with leading zeros and a short text field with trailing spaces", () => {
    const packed = pack({ mti: "0100", fields: { 4: "12550", 41: "T1" } }, ascii);
    expect(packed.ok && packed.value.toString("latin1", 20)).toBe("000000012550" + "T1      ");
  });

  it("pads an x+n amount between its sign and its digits", () => {
    const packed = pack({ mti: "0100", fields: { 28: "C150" } }, binary);
    expect(packed.ok && packed.value.subarray(10).toString("hex").toUpperCase()).toBe("43" + "00000150");
  });

  it("names a field one character past its maximum length", () => {
    const error = errorOf(pack({ mti: "0100", fields: { 2: "41111111111111111111" } }, ascii));
    expect(error.code).toBe("ISO8583_FIELD_TOO_LONG");
    expect(error.position.fieldPath).toEqual(["2"]);
    expect(error.valueMasked).toBe("411111**********1111");
  });

  it("names a character outside 7-bit ASCII in an ASCII text field, with its byte offset and the card number masked", () => {
    const error = errorOf(pack({ mti: "0100", fields: { 2: "4761739001010119", 43: "CAFÉ" } }, ascii));
    expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
    expect(error.position).toEqual({ fieldPath: ["43"], byteOffset: 38 });
    const pan = errorOf(pack({ mti: "0100", fields: { 2: "476173900101011\u00e9" } }, ascii));
    expect(pan.position).toEqual({ fieldPath: ["2"], byteOffset: 20 });
    expect(JSON.stringify(pan)).not.toContain("47617390010101");
  });

  it("writes a field the fast path does not take (a short fixed text field in a packed run) the same as the generic codec", () => {
    const packed = pack({ mti: "0100", fields: { 3: "0", 11: "7", 41: "T", 49: "978" } }, ascii);
    expect(packed.ok && packed.value.toString("latin1", 20)).toBe("000000" + "000007" + "T       " + "978");
  });

  it("refuses a NUL in a text field, as unpack does, in every encoding and on both paths (regression: it was packed, then refused on the way back in)", () => {
    for (const dictionary of [ascii, binary]) {
      for (const value of ["TERM\u0000001", "\u0000"]) {   // a full fixed field (the fast path) and a padded one (the generic path)
        const error = errorOf(pack({ mti: "0800", fields: { 7: "0611080000", 11: "000001", 41: value, 70: "001" } }, dictionary));
        expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
        expect(error.position.fieldPath).toEqual(["41"]);
        expect(error.message).toMatch(/NUL/);
      }
    }
  });

  it("names a numeric field given a letter", () => {
    const error = errorOf(pack({ mti: "0100", fields: { 11: "12345A" } }, ascii));
    expect(error.code).toBe("ISO8583_FIELD_INVALID_CHARACTER");
    expect(error.position.fieldPath).toEqual(["11"]);
  });

  it("names a field the dictionary does not define", () => {
    const error = errorOf(pack({ mti: "0100", fields: { 1: "x" } }, ascii));
    expect(error.code).toBe("ISO8583_FIELD_UNDEFINED");
    expect(error.position.fieldPath).toEqual(["1"]);
  });

  it("names a key that is not a field number as written (\"02\", \"x\") or is beyond field 192, next to valid fields", () => {
    for (const key of ["02", "x", "2.0", "193"]) {
      const error = errorOf(pack({ mti: "0100", fields: { 2: "4761739001010119", 11: "000123", [key]: "1" } as Message["fields"] }, ascii));
      expect(error.code).toBe("ISO8583_FIELD_UNDEFINED");
      expect(error.position.fieldPath).toEqual([key]);
    }
  });

  it("names a defined field given no value (undefined), next to valid fields", () => {
    const error = errorOf(pack({ mti: "0100", fields: { 2: "4761739001010119", 11: undefined } as unknown as Message["fields"] }, ascii));
    expect(error.code).toBe("ISO8583_FIELD_VALUE_INVALID");
    expect(error.position.fieldPath).toEqual(["11"]);
  });

  it("refuses an MTI that is not four digits", () => {
    expect(errorOf(pack({ mti: "100", fields: {} }, ascii)).code).toBe("ISO8583_MTI_INVALID");
  });

  it("refuses a binary field that is not whole bytes of hex", () => {
    expect(errorOf(pack({ mti: "0200", fields: { 52: "7434F67813BAE54" } }, ascii)).code).toBe("ISO8583_FIELD_VALUE_INVALID");
  });

  it("refuses a message one byte over messageBytesMax, and packs it at exactly the bound", () => {
    const packed = pack(signOn, ascii);
    expect(packed.ok).toBe(true);
    if (!packed.ok) return;
    expect(pack(signOn, ascii, { messageBytesMax: packed.value.length }).ok).toBe(true);
    expect(errorOf(pack(signOn, ascii, { messageBytesMax: packed.value.length - 1 })).code).toBe("ISO8583_MESSAGE_TOO_LARGE");
  });

  it("writes field 90 from its named subfields, zero-padding each", () => {
    const packed = pack({ mti: "0400", fields: { 90: { originalMessageTypeIdentifier: "0100", originalSystemTraceAuditNumber: "123",
      originalTransmissionDateTime: "0611143015", originalAcquiringInstitutionIdentificationCode: "423935" } } }, ascii);
    expect(packed.ok && packed.value.toString("latin1", 36)).toBe("0100" + "000123" + "0611143015" + "00000423935" + "00000000000");
  });

  it("names a field 90 subfield that is too long", () => {
    const error = errorOf(pack({ mti: "0400", fields: { 90: { originalSystemTraceAuditNumber: "1234567" } } }, ascii));
    expect(error.code).toBe("ISO8583_SUBFIELDS_INVALID");
    expect(error.position.fieldPath).toEqual(["90", "originalSystemTraceAuditNumber"]);
  });

  it("names a field 90 subfield the dictionary does not know", () => {
    expect(errorOf(pack({ mti: "0400", fields: { 90: { originalRetrievalReferenceNumber: "1" } } }, ascii)).code).toBe("ISO8583_SUBFIELDS_INVALID");
  });

  it("accepts field 90 as its 42 raw digits", () => {
    const raw = "0100000123061114301500000423935" + "00000000000";
    const packed = pack({ mti: "0400", fields: { 90: raw } }, ascii);
    expect(packed.ok && unpack(packed.value, ascii)).toMatchObject({ ok: true, value: { fields: { 90: { originalSystemTraceAuditNumber: "000123" } } } });
  });

  it("accepts field 55 as raw TLV hex and refuses malformed TLV hex", () => {
    expect(pack({ mti: "0100", fields: { 55: "9F020600000000100082021980" } }, ascii).ok).toBe(true);
    expect(errorOf(pack({ mti: "0100", fields: { 55: "9F0206000000" } }, ascii)).code).toBe("ISO8583_TLV_INVALID");
  });

  it("refuses a plain field given an object", () => {
    expect(errorOf(pack({ mti: "0100", fields: { 3: { a: "1" } } }, ascii)).code).toBe("ISO8583_FIELD_VALUE_INVALID");
  });

  it("refuses a bitmapCount beyond the dictionary's bitmaps", () => {
    expect(errorOf(pack({ ...signOn, bitmapCount: 3 }, ascii)).code).toBe("ISO8583_BITMAP_TOO_MANY");
  });

  it("packs fields in ascending order whatever order they were given in", () => {
    const shuffled: Message = { mti: "0800", fields: Object.fromEntries([["70", "001"], ["11", "000001"], ["7", "0611080000"]]) };
    expect(pack(shuffled, ascii)).toEqual(pack(signOn, ascii));
  });
});
