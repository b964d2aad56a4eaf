import { describe, expect, it } from "vitest";
import { dictionaryByName, pack, unpack } from "../../../src/protocols/iso8583/index.ts";
import { loadFixtures } from "./support/fixtures.ts";

const fixtures = loadFixtures();

describe("ISO 8583 fixtures", () => {
  it("include the messages the gateway depends on", () => {
    const mtis = new Set(fixtures.map((fixture) => fixture.expected.mti));
    for (const mti of ["0100", "0110", "0200", "0400", "0401", "0800"]) expect(mtis).toContain(mti);
    expect(fixtures.some((fixture) => fixture.dictionary === "iso87-binary")).toBe(true);
  });

  for (const fixture of fixtures) {
    const dictionary = dictionaryByName(fixture.dictionary);
    const wire = Buffer.from(fixture.wireHex, "hex");

    it(`${fixture.file} unpacks to its expected MTI and fields`, () => {
      expect(dictionary).toBeDefined();
      const message = unpack(wire, dictionary!);
      if (!message.ok) expect.fail(`${message.error.code} at ${JSON.stringify(message.error.position)}: ${message.error.message}`);
      expect(message.value).toEqual(fixture.expected);
    });

    it(`${fixture.file} packs from its expected fields to the same bytes`, () => {
      const packed = pack(fixture.expected, dictionary!);
      if (!packed.ok) expect.fail(`${packed.error.code}: ${packed.error.message}`);
      expect(packed.value.toString("hex").toUpperCase()).toBe(fixture.wireHex);
    });
  }
});
