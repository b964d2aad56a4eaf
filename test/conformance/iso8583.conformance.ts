import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  createDeframer, decodeFrameHeader, encodeFrameHeader, frameMessage, loadDictionary, pack, unpack,
  type Dictionary, type Framing,
} from "../../src/protocols/iso8583/index.ts";

/**
 * Public ISO 8583 vectors in ../shared/conformance/iso8583, read in place. Their field specs use a
 * neutral JSON format (SOURCES.md); the adapter below turns one into our dictionary form.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const conformanceDir = resolve(repoRoot, "../shared/conformance/iso8583");

interface NeutralField { name?: string; type: string; maxLen: number; prefix: string; lenEnc?: string; enc: string }
interface NeutralSpec { name: string; mti: { enc: string }; bitmap: { enc: string }; fields: Record<string, NeutralField> }
interface MessageVector {
  id: string; variant: string; spec: string; framing: string; wireHex: string;
  expected: { mti: string; fieldsPresent: number[]; fields: Record<string, string> };
}

const encodingOf: Record<string, string> = {
  ascii: "ascii", ebcdic: "ebcdic", bcd: "bcd", lbcd: "bcd-left", binary: "binary", "ascii-hex": "ascii-hex", "sign+bcd": "sign-bcd",
};
const knownTypes = new Set(["n", "a", "an", "ans", "ns", "as", "z", "b", "x+n"]);

/**
 * Neutral spec -> our dictionary. A fractional maxLen on field 65 marks it as the tertiary-bitmap
 * indicator (moov's reading), so that dictionary gets three bitmaps and no field 65. The vectors
 * say in their `variant` text which fields a sender wrote in EBCDIC ("field 42 EBCDIC").
 */
export function dictionaryFromNeutralSpec(spec: NeutralSpec, variant = ""): Dictionary {
  const ebcdicFields = new Set([...variant.matchAll(/field (\d+) EBCDIC/g)].map((match) => match[1]));
  const field65 = spec.fields["65"];
  const tertiary = field65 !== undefined && !Number.isInteger(field65.maxLen);
  const fields: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(spec.fields)) {
    if (key === "65" && tertiary) continue;
    const encoding = ebcdicFields.has(key) ? "ebcdic" : encodingOf[field.enc];
    if (encoding === undefined) throw new Error(`spec field ${key}: unknown encoding ${field.enc}`);
    fields[key] = {
      name: `field${key}`, title: field.name ?? `field ${key}`, type: knownTypes.has(field.type) ? field.type : "ans",
      length: field.maxLen, prefix: field.prefix,
      ...(field.prefix === "fixed" ? {} : { prefixEncoding: field.lenEnc ?? "ascii" }),
      encoding,
    };
  }
  return loadDictionary({
    name: spec.name,
    mti: { encoding: spec.mti.enc === "bcd" ? "bcd" : spec.mti.enc === "ebcdic" ? "ebcdic" : "ascii" },
    bitmap: { encoding: spec.bitmap.enc === "binary" ? "binary" : "hex", bitmapsMax: tertiary ? 3 : 2 },
    fields,
  });
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

const vectorFiles = readdirSync(join(conformanceDir, "vectors")).filter((file) => file.endsWith(".json")).sort();
const messageVectors = vectorFiles.filter((file) => file !== "framing-length-headers.json");

describe("ISO 8583 conformance vectors (../shared/conformance/iso8583)", () => {
  it("finds message vectors to check", () => {
    expect(messageVectors.length).toBeGreaterThan(0);
  });

  for (const file of messageVectors) {
    const vector = readJson<MessageVector>(join(conformanceDir, "vectors", file));
    const dictionary = dictionaryFromNeutralSpec(readJson<NeutralSpec>(join(conformanceDir, vector.spec)), vector.variant);
    const wire = Buffer.from(vector.wireHex, "hex");

    it(`${vector.id} unpacks to the listed MTI and fields`, () => {
      expect(vector.framing).toBe("none");
      const message = unpack(wire, dictionary);
      if (!message.ok) expect.fail(`${message.error.code} at ${JSON.stringify(message.error.position)}: ${message.error.message}`);
      expect(message.value.mti).toBe(vector.expected.mti);
      expect(message.value.fields).toEqual(vector.expected.fields);
      const dataFields = vector.expected.fieldsPresent.filter((bit) => bit !== 1 && bit !== 65).map(String);
      expect(Object.keys(message.value.fields)).toEqual(dataFields);
    });

    it(`${vector.id} repacks to the same bytes`, () => {
      const message = unpack(wire, dictionary);
      expect(message.ok).toBe(true);
      if (!message.ok) return;
      const repacked = pack(message.value, dictionary);
      if (!repacked.ok) expect.fail(`${repacked.error.code}: ${repacked.error.message}`);
      expect(repacked.value.toString("hex").toUpperCase()).toBe(vector.wireHex.toUpperCase());
    });
  }

  describe("framing-length-headers", () => {
    interface HeaderCase { header: string; length?: number; headerHex?: string; headerAscii?: string; expectError?: boolean }
    const framingVector = readJson<{ cases: HeaderCase[]; constructed: { binary2: string; ascii4: string } }>(join(conformanceDir, "vectors", "framing-length-headers.json"));
    const framingOf = (name: string): Framing => {
      if (name.startsWith("binary-2-bytes")) return "binary-2";
      if (name.startsWith("ascii-4-bytes")) return "ascii-4";
      if (name.startsWith("bcd-2-bytes")) return "bcd-2";
      if (name.startsWith("VML")) return "vml-4";
      throw new Error(`no framer for header case ${name}`);
    };

    for (const headerCase of framingVector.cases) {
      const framing = framingOf(headerCase.header);
      const header = headerCase.headerHex !== undefined ? Buffer.from(headerCase.headerHex, "hex") : Buffer.from(headerCase.headerAscii ?? "", "latin1");
      if (headerCase.expectError === true) {
        it(`${headerCase.header}: is refused`, () => {
          expect(decodeFrameHeader(header, framing).ok).toBe(false);
          const deframer = createDeframer(framing);
          expect(deframer.push(header).frames).toEqual([]);
          expect(deframer.finish().ok).toBe(false);
        });
      } else {
        it(`${headerCase.header}: reads length ${headerCase.length}`, () => {
          const length = decodeFrameHeader(header, framing);
          expect(length).toEqual({ ok: true, value: headerCase.length });
        });
        it(`${headerCase.header}: writes a header that reads back as length ${headerCase.length}`, () => {
          const written = encodeFrameHeader(headerCase.length ?? -1, framing);
          expect(written.ok).toBe(true);
          if (!written.ok) return;
          expect(decodeFrameHeader(written.value, framing)).toEqual({ ok: true, value: headerCase.length });
          // Reserved VML bytes are written as zeros; every other header is written exactly as read.
          const reservedNonZero = framing === "vml-4" && header.readUInt16BE(2) !== 0;
          if (!reservedNonZero) expect(written.value.equals(header)).toBe(true);
        });
      }
    }

    const constructedBody = () => {
      const binary2 = Buffer.from(framingVector.constructed.binary2, "hex");
      return binary2.subarray(2);
    };

    it("the constructed message framed with a 2-byte binary header deframes and reframes to the same bytes", () => {
      const framed = Buffer.from(framingVector.constructed.binary2, "hex");
      const result = createDeframer("binary-2").push(framed);
      expect(result.error).toBeUndefined();
      expect(result.frames).toEqual([constructedBody()]);
      expect(frameMessage(constructedBody(), "binary-2")).toEqual({ ok: true, value: framed });
    });

    it("the constructed message framed with a 4-byte ASCII header deframes and reframes to the same bytes", () => {
      const framed = Buffer.from(framingVector.constructed.ascii4, "latin1");
      const result = createDeframer("ascii-4").push(framed);
      expect(result.error).toBeUndefined();
      expect(result.frames).toEqual([constructedBody()]);
      expect(frameMessage(constructedBody(), "ascii-4")).toEqual({ ok: true, value: framed });
    });
  });
});


