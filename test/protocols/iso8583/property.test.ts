import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isErrorCode } from "../../../src/errors/catalog.ts";
import type { Finding, Result } from "../../../src/errors/finding.ts";
import {
  createDeframer, dictionaryByName, framings, iso87AsciiDictionary as ascii, iso87BinaryDictionary as binary, jposIso87aDictionary,
  jposIso87bDictionary, loadDictionary, moovSpec87AsciiDictionary, pack, unpack, unpackTolerant, type Dictionary, type Message,
} from "../../../src/protocols/iso8583/index.ts";
import { loadFixtures } from "./support/fixtures.ts";

const tertiaryEbcdic = loadDictionary({
  name: "tertiary-ebcdic", mti: { encoding: "ebcdic" }, bitmap: { encoding: "binary", bitmapsMax: 3 },
  fields: {
    "2": { name: "primaryAccountNumber", type: "n", length: 19, prefix: "LL", prefixEncoding: "ebcdic", encoding: "ebcdic", sensitive: "pan" },
    "3": { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "bcd" },
    "28": { name: "amountTransactionFee", type: "x+n", length: 9, prefix: "fixed", encoding: "sign-bcd" },
    "55": { name: "iccData", type: "b", length: 255, prefix: "LLL", prefixEncoding: "binary", encoding: "binary", composite: { kind: "tlv" } },
    "70": { name: "networkManagementInformationCode", type: "n", length: 3, prefix: "fixed", encoding: "ascii" },
    "130": { name: "privateData", type: "z", length: 37, prefix: "LL", prefixEncoding: "bcd", encoding: "bcd-left", padding: "F" },
  },
});
const dictionaries: Dictionary[] = [ascii, binary, tertiaryEbcdic, jposIso87aDictionary, jposIso87bDictionary, moovSpec87AsciiDictionary];
const fixtures = loadFixtures();
const runs = { numRuns: 2_000 };

function isTypedError(result: Result<unknown, Finding>): boolean {
  return !result.ok && isErrorCode(result.error.code) && result.error.code.startsWith("ISO8583_") && typeof result.error.position.byteOffset === "number";
}

/** Whatever unpack accepts, pack writes back, and reading that again gives the same message. */
function checkUnpack(bytes: Uint8Array, dictionary: Dictionary): void {
  const result = unpack(bytes, dictionary);
  if (!result.ok) {
    expect(isTypedError(result)).toBe(true);
    return;
  }
  const repacked = pack(result.value, dictionary);
  expect(repacked.ok).toBe(true);
  if (!repacked.ok) return;
  const reread = unpack(repacked.value, dictionary);
  expect(reread).toEqual({ ok: true, value: result.value });
}

/**
 * Tolerant reading of the same bytes: a value or a typed error, never an exception; each raw field
 * has a warning naming it, and the fields that did decode are exactly what strict reading gives
 * when there is no raw field.
 */
function checkTolerant(bytes: Uint8Array, dictionary: Dictionary): void {
  const tolerant = unpackTolerant(bytes, dictionary);
  const strict = unpack(bytes, dictionary);
  if (!tolerant.ok) {
    expect(isTypedError(tolerant)).toBe(true);
    expect(strict.ok).toBe(false);
    return;
  }
  const rawNumbers = Object.keys(tolerant.value.rawFields);
  expect(tolerant.value.findings.map((found) => found.position.fieldPath?.[0])).toEqual(rawNumbers);
  for (const found of tolerant.value.findings) {
    expect(isErrorCode(found.code)).toBe(true);
    expect(found.severity).toBe("warning");
    expect(typeof found.position.byteOffset).toBe("number");
  }
  if (rawNumbers.length === 0) expect(strict).toEqual({ ok: true, value: tolerant.value.message });
  else expect(strict.ok).toBe(false);
}

// Byte edits of a valid message reach far deeper into the codec than uniform noise does.
const mutation = (length: number) => fc.oneof(
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(length), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(length), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(length), byte: fc.constant(0) }),
);

function mutate(wire: Buffer, edits: { kind: "set" | "insert" | "delete"; at: number; byte: number }[]): Buffer {
  let bytes = Buffer.from(wire);
  for (const edit of edits) {
    const at = Math.min(edit.at, bytes.length);
    if (edit.kind === "set" && at < bytes.length) bytes[at] = edit.byte;
    else if (edit.kind === "insert") bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([edit.byte]), bytes.subarray(at)]);
    else bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
  }
  return bytes;
}

describe("any input gives a message or a typed error, never an exception", () => {
  it("random bytes, with every dictionary", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom(...dictionaries), (bytes, dictionary) => {
      checkUnpack(bytes, dictionary);
    }), runs);
  });

  it("random bytes read tolerantly, with every dictionary", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom(...dictionaries), (bytes, dictionary) => {
      checkTolerant(bytes, dictionary);
    }), runs);
  });

  it("random edits of every fixture read tolerantly", () => {
    for (const fixture of fixtures) {
      const wire = Buffer.from(fixture.wireHex, "hex");
      const dictionary = dictionaryByName(fixture.dictionary)!;
      fc.assert(fc.property(fc.array(mutation(wire.length), { minLength: 1, maxLength: 4 }), (edits) => {
        checkTolerant(mutate(wire, edits), dictionary);
      }), { numRuns: 200 });
    }
  });

  it("random digits and hex behind a valid ASCII MTI", () => {
    const text = fc.string({ unit: fc.constantFrom(..."0123456789ABCDEF"), maxLength: 300 });
    fc.assert(fc.property(text, (body) => checkUnpack(Buffer.from(`0100${body}`, "latin1"), ascii)), runs);
  });

  it("random edits of every fixture", () => {
    for (const fixture of fixtures) {
      const wire = Buffer.from(fixture.wireHex, "hex");
      const dictionary = dictionaryByName(fixture.dictionary)!;
      fc.assert(fc.property(fc.array(mutation(wire.length), { minLength: 1, maxLength: 4 }), (edits) => {
        checkUnpack(mutate(wire, edits), dictionary);
      }), { numRuns: 300 });
    }
  });

  it("errors from edited card messages never quote a PAN in clear", () => {
    const pans = ["4761739001010119", "4761739001010119123"];
    for (const fixture of fixtures.filter((candidate) => typeof candidate.expected.fields["2"] === "string")) {
      const wire = Buffer.from(fixture.wireHex, "hex");
      const dictionary = dictionaryByName(fixture.dictionary)!;
      fc.assert(fc.property(fc.array(mutation(wire.length), { minLength: 1, maxLength: 3 }), (edits) => {
        const result = unpack(mutate(wire, edits), dictionary);
        if (result.ok) return;
        const text = JSON.stringify(result.error);
        for (const pan of pans) expect(text).not.toContain(pan.slice(0, 12));
      }), { numRuns: 300 });
    }
  });

  it("random values given to pack", () => {
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })),
      fc.array(fc.record({ tag: fc.string({ maxLength: 6 }), value: fc.string({ maxLength: 6 }) }), { maxLength: 3 }));
    const fields = fc.dictionary(fc.integer({ min: 0, max: 200 }).map(String), value, { maxKeys: 6 });
    fc.assert(fc.property(fc.string({ maxLength: 5 }), fields, fc.constantFrom(...dictionaries), (mti, given, dictionary) => {
      const result = pack({ mti, fields: given } as Message, dictionary);
      if (!result.ok) {
        expect(isTypedError(result)).toBe(true);
        return;
      }
      expect(unpack(result.value, dictionary).ok).toBe(true);
    }), runs);
  });

  it("random chunks given to every deframer", () => {
    fc.assert(fc.property(fc.constantFrom(...framings), fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }), (framing, chunks) => {
      const deframer = createDeframer(framing, 200);
      for (const chunk of chunks) {
        const result = deframer.push(chunk);
        for (const frame of result.frames) expect(frame.length).toBeLessThanOrEqual(200);
        if (result.error !== undefined) expect(isErrorCode(result.error.code)).toBe(true);
        expect(deframer.bufferedBytes).toBeLessThanOrEqual(deframer.headerBytes + 200);
      }
    }), runs);
  });
});
