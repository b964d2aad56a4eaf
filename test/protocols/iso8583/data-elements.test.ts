import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import iso87Ascii from "../../../protocols/iso8583/iso87-ascii.json" with { type: "json" };
import { de } from "../../../src/protocols/iso8583/data-elements.ts";
import { renderDataElements } from "../../../src/protocols/iso8583/data-elements-source.ts";
import { loadDictionary, shippedDictionaries } from "../../../src/protocols/iso8583/index.ts";

const generated = new URL("../../../src/protocols/iso8583/data-elements.ts", import.meta.url);

describe("the data element names (src/protocols/iso8583/data-elements.ts)", () => {
  it("are the shipped dictionaries' names as generated (run npm run gen:iso8583)", () => {
    expect(readFileSync(generated, "utf8")).toBe(renderDataElements([...shippedDictionaries.values()]));
  });

  it("name in every shipped dictionary the field of their number", () => {
    for (const dictionary of shippedDictionaries.values()) {
      for (const [name, number] of Object.entries(de)) {
        const field = dictionary.fields[number];
        if (field !== undefined) expect(`${dictionary.name} DE ${number}: ${field.name}`).toBe(`${dictionary.name} DE ${number}: ${name}`);
      }
    }
  });

  it("refuse two dictionaries that name one data element differently", () => {
    const renamed = structuredClone(iso87Ascii) as { name: string; fields: Record<string, { name: string }> };
    renamed.name = "iso87-ascii-renamed";
    (renamed.fields["37"] as { name: string }).name = "referenceNumber";
    expect(() => renderDataElements([loadDictionary(iso87Ascii), loadDictionary(renamed)]))
      .toThrow("DE 37 is retrievalReferenceNumber in iso87-ascii and referenceNumber in iso87-ascii-renamed");
  });
});
