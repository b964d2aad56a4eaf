import { describe, expect, it } from "vitest";
import {
  defaultDictionary, jposIso87aDictionary, shippedDictionaries, unpack, type FieldDefinition,
} from "../../../src/protocols/iso8583/index.ts";

// Issue 30 item 6: the default iso87-ascii said it was jPOS's iso87ascii layout but lays out
// DE 55, 93 and 96 otherwise, so a jPOS ASCII image decoded only with jpos-iso87a.
//
// jPOS's packager/iso87ascii.xml (tested by jPOS as equal to ISO87APackager) for these fields:
// DE 55 IFA_LLLCHAR 999 (ASCII LLL count of bytes, the bytes as they are), DE 93 IF_CHAR 6,
// DE 96 IFA_BINARY 16 (16 bytes written as 32 hex characters).
const jposIso87ascii: Record<number, Partial<FieldDefinition>> = {
  55: { prefix: "LLL", prefixEncoding: "ascii", encoding: "binary", length: 999 },
  93: { prefix: "fixed", encoding: "ascii", length: 6 },
  96: { prefix: "fixed", encoding: "ascii-hex", length: 16 },
};

const emvBytes = Buffer.from("9F020600000001255" + "05F2A020978", "hex"); // 14 bytes of BER-TLV
const macHex = "00112233445566778899AABBCCDDEEFF";

/** 0800 with DE 3, 11, 55, 93, 96, written byte by byte as jPOS's iso87ascii packs it. */
function jposImage(): Buffer {
  return Buffer.concat([
    Buffer.from("0800", "ascii"),
    Buffer.from("A020000000000200", "ascii"),  // primary: bits 1 (secondary), 3, 11, 55
    Buffer.from("0000000900000000", "ascii"),  // secondary: bits 93, 96
    Buffer.from("000000" + "000001", "ascii"), // DE 3, DE 11
    Buffer.from("014", "ascii"), emvBytes,     // DE 55: LLL count of bytes, raw bytes
    Buffer.from("RSP001", "ascii"),            // DE 93: 6 characters
    Buffer.from(macHex, "ascii"),              // DE 96: 16 bytes as 32 hex characters
  ]);
}

function differsFromJpos(definition: FieldDefinition | undefined, number: number): boolean {
  const jpos = jposIso87ascii[number] ?? {};
  return Object.entries(jpos).some(
    ([key, value]) => definition?.[key as keyof FieldDefinition] !== value,
  );
}

describe("dictionaries and jPOS's iso87ascii layout", () => {
  it("decodes a jPOS iso87ascii image of DE 55, 93, 96 with jpos-iso87a, field for field", () => {
    expect(unpack(jposImage(), jposIso87aDictionary)).toEqual({
      ok: true,
      value: {
        mti: "0800",
        fields: {
          3: "000000", 11: "000001",
          55: [{ tag: "9F02", value: "000000012550" }, { tag: "5F2A", value: "0978" }],
          93: "RSP001", 96: macHex,
        },
      },
    });
  });

  it("names in a title citing jPOS's ASCII layout each of DE 55, 93, 96 laid out otherwise", () => {
    const citing = [...shippedDictionaries.values()]
      .filter((dictionary) => /iso87ascii|ISO87APackager/.test(dictionary.title));
    expect(citing.map((dictionary) => dictionary.name)).toContain("jpos-iso87a");
    for (const dictionary of citing) {
      const unnamed = [55, 93, 96].filter((number) =>
        differsFromJpos(dictionary.fields[number], number) &&
        !dictionary.title.includes(`DE ${number}`));
      expect(unnamed, `${dictionary.name}: ${dictionary.title}`).toEqual([]);
    }
  });

  it("keeps the default's DE 55, 93 and 96 as ISO 8583:1987 writes them, unlike jPOS", () => {
    expect(defaultDictionary.name).toBe("iso87-ascii");
    const differing = [55, 93, 96]
      .filter((number) => differsFromJpos(defaultDictionary.fields[number], number));
    expect(differing).toEqual([55, 93, 96]);
    const image = Buffer.concat([
      Buffer.from("0800A0200000000002000000000900000000000000000001", "ascii"),
      Buffer.from("014", "ascii"), Buffer.from(emvBytes.toString("hex").toUpperCase(), "ascii"),
      Buffer.from("RSP01", "ascii"),             // DE 93: an 5
      Buffer.from("0011223344556677", "ascii"),  // DE 96: b 64 bits, 8 bytes as 16 hex characters
    ]);
    const read = unpack(image, defaultDictionary);
    expect(read.ok && read.value.fields).toMatchObject({ 93: "RSP01", 96: "0011223344556677" });
  });
});
