import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import { iso87AsciiDictionary as ascii, iso87BinaryDictionary as binary, pack, unpack, type TlvElement } from "../../../src/protocols/iso8583/index.ts";
import { buildTlv, parseTlv } from "../../../src/protocols/iso8583/tlv.ts";

function parse(hex: string) {
  const bytes = Buffer.from(hex, "hex");
  return parseTlv(bytes, 0, bytes.length, limits.iso8583.tlvElementsMax);
}

describe("BER-TLV (field 55)", () => {
  it("reads one- and two-byte tags with short lengths", () => {
    expect(parse("9F0206000000001000" + "820219 80".replace(" ", ""))).toEqual([
      { tag: "9F02", value: "000000001000" }, { tag: "82", value: "1980" },
    ]);
  });

  it("reads a long-form 0x81 length", () => {
    const value = "AB".repeat(200);
    expect(parse("9F10" + "81C8" + value)).toEqual([{ tag: "9F10", value }]);
  });

  it("refuses a length not in its shortest form, which would not repack to the same bytes", () => {
    expect(parse("9F02" + "8106" + "000000001000")).toMatchObject({ reason: "length not in its shortest form", tag: "9F02" });
  });

  it("refuses an indefinite length", () => {
    expect(parse("9F02" + "80" + "00")).toMatchObject({ reason: "indefinite or oversized length" });
  });

  it("refuses a value running past the end of the field", () => {
    expect(parse("9F0206000000")).toMatchObject({ reason: "value runs past the end of the data", offset: 2 });
  });

  it("refuses padding bytes between elements", () => {
    expect(parse("820219800000")).toMatchObject({ reason: "padding byte where a tag must start", offset: 4 });
  });

  it("refuses a tag whose continuation never ends", () => {
    expect(parse("9F")).toMatchObject({ reason: "tag runs past the end of the data" });
  });

  it("writes lengths in their shortest form", () => {
    expect(buildTlv([{ tag: "9F10", value: "AB".repeat(130) }], 64)).toBe("9F10" + "8182" + "AB".repeat(130));
    expect(buildTlv([{ tag: "82", value: "" }], 64)).toBe("8200");
  });

  it("refuses to write a malformed tag", () => {
    expect(buildTlv([{ tag: "1F", value: "00" }], 64)).toMatchObject({ reason: "malformed tag" });
    expect(buildTlv([{ tag: "9F82", value: "00" }], 64)).toMatchObject({ reason: "malformed tag" });
  });

  it("reads the configured maximum number of elements and refuses one more", () => {
    const elementsMax = limits.iso8583.tlvElementsMax;
    const atBound: TlvElement[] = Array.from({ length: elementsMax }, () => ({ tag: "9C", value: "00" }));
    const packed = pack({ mti: "0100", fields: { 55: atBound } }, binary);
    expect(packed.ok).toBe(true);
    if (packed.ok) expect(unpack(packed.value, binary)).toEqual({ ok: true, value: { mti: "0100", fields: { 55: atBound } } });

    const onePast = [...atBound, { tag: "9C", value: "00" }];
    const wire = Buffer.concat([Buffer.from("0100" + "0000000000000200", "hex"), Buffer.from("0" + String(onePast.length * 3), "hex"),
      Buffer.from("9C0100".repeat(onePast.length), "hex")]);
    const read = unpack(wire, binary);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.error.code).toBe("ISO8583_TLV_TOO_MANY_ELEMENTS");
    const written = pack({ mti: "0100", fields: { 55: onePast } }, binary);
    expect(written.ok).toBe(false);
    if (!written.ok) expect(written.error.code).toBe("ISO8583_TLV_TOO_MANY_ELEMENTS");
  });

  it("names the tag and the byte offset in the message of a bad element in an ASCII-hex field 55", () => {
    const tlvHex = "9F0206000000001000" + "9F03" + "8106" + "000000000000";
    const wire = Buffer.from("0100" + "0000000000000200" + String(tlvHex.length / 2).padStart(3, "0") + tlvHex, "latin1");
    const read = unpack(wire, ascii);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.error.code).toBe("ISO8583_TLV_INVALID");
    expect(read.error.position).toEqual({ fieldPath: ["55", "9F03"], byteOffset: 23 + 2 * 11 });
  });
});
