import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dictionaryByName, unpack, unpackTolerant } from "../../../src/protocols/iso8583/index.ts";
import { fixturesDir } from "./support/fixtures.ts";

interface ExpectedFinding { code: string; fieldPath: string[]; byteOffset: number }
interface TolerantFixture {
  file: string;
  dictionary: string;
  wireHex: string;
  strictError: ExpectedFinding;
  expected: { mti: string; fields: Record<string, unknown>; rawFields: Record<string, string>; findings: ExpectedFinding[] };
}

const tolerantDir = join(fixturesDir, "tolerant");
const fixtures: TolerantFixture[] = readdirSync(tolerantDir).filter((file) => file.endsWith(".json")).sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(tolerantDir, file), "utf8")) as Omit<TolerantFixture, "file">) }));

describe("tolerant ISO 8583 reading (traces)", () => {
  it("has fixtures to read", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
  });

  for (const fixture of fixtures) {
    const dictionary = dictionaryByName(fixture.dictionary)!;
    const wire = Buffer.from(fixture.wireHex, "hex");

    it(`${fixture.file}: keeps the broken fields raw, each with a warning naming field and offset, and decodes the rest`, () => {
      const read = unpackTolerant(wire, dictionary);
      if (!read.ok) expect.fail(`${read.error.code}: ${read.error.message}`);
      expect(read.value.message).toEqual({ mti: fixture.expected.mti, fields: fixture.expected.fields });
      expect(read.value.rawFields).toEqual(fixture.expected.rawFields);
      expect(read.value.findings.map((found) => ({ code: found.code, fieldPath: found.position.fieldPath, byteOffset: found.position.byteOffset })))
        .toEqual(fixture.expected.findings);
      expect(read.value.findings.every((found) => found.severity === "warning" && found.valueMasked !== undefined)).toBe(true);
    });

    it(`${fixture.file}: strict reading (the endpoint's rules) refuses the message at the first broken field`, () => {
      const strict = unpack(wire, dictionary);
      expect(strict.ok).toBe(false);
      if (strict.ok) return;
      expect({ code: strict.error.code, fieldPath: strict.error.position.fieldPath, byteOffset: strict.error.position.byteOffset })
        .toEqual(fixture.strictError);
    });

    it(`${fixture.file}: raw fields and findings never show the card number in clear`, () => {
      const read = unpackTolerant(wire, dictionary);
      const text = JSON.stringify(read.ok ? [read.value.rawFields, read.value.findings] : read.error);
      expect(text).not.toMatch(/4761739001010119123|3437363137333930303130313031313931/);
    });
  }

  it("still stops where a length is unknown: a length prefix that is not a number", () => {
    const dictionary = dictionaryByName("jpos-iso87a")!;
    const wire = Buffer.from("0200" + "4000000000000000" + "1X" + "4761739001010119123", "latin1");
    expect(unpackTolerant(wire, dictionary)).toMatchObject({ ok: false, error: { code: "ISO8583_FIELD_LENGTH_INVALID", position: { fieldPath: ["2"], byteOffset: 20 } } });
  });

  it("leaves the last announced field out of the decoded fields when it is kept raw", () => {
    const dictionary = dictionaryByName("jpos-iso87a")!;
    const bitmapWith11And44 = "0020000000100000";
    const wire = Buffer.from("0110" + bitmapWith11And44 + "000123" + "30" + "3" + "0".repeat(29), "latin1");
    const read = unpackTolerant(wire, dictionary);
    if (!read.ok) expect.fail(read.error.code);
    expect(Object.keys(read.value.message.fields)).toEqual(["11"]);
    expect(Object.keys(read.value.rawFields)).toEqual(["44"]);
  });

  it("reads a variable field longer than its maximum raw and goes on to the next field", () => {
    const dictionary = dictionaryByName("jpos-iso87a")!;
    const field44 = "3" + "0".repeat(29); // IFA_LLCHAR 25 in ISO87A: 30 characters is over
    const bitmapWith44And49 = "0000000000108000";
    const wire = Buffer.from("0110" + bitmapWith44And49 + "30" + field44 + "978", "latin1");
    expect(unpack(wire, dictionary)).toMatchObject({ ok: false, error: { code: "ISO8583_FIELD_TOO_LONG" } });
    const read = unpackTolerant(wire, dictionary);
    expect(read).toMatchObject({ ok: true, value: { message: { mti: "0110", fields: { 49: "978" } }, findings: [{ code: "ISO8583_FIELD_TOO_LONG", position: { fieldPath: ["44"] } }] } });
    expect(read.ok && read.value.rawFields[44]).toBe(Buffer.from(field44, "latin1").toString("hex").toUpperCase());
  });
});
