import { assert } from "../../assert.ts";
import type { Dictionary } from "./types.ts";

/**
 * The source of src/protocols/iso8583/data-elements.ts: the data element numbers by their standard
 * names, as the field dictionaries in protocols/iso8583/ spell them. Code reads a field as
 * `de.retrievalReferenceNumber`, never as 37; the map is generated (`npm run gen:iso8583`) so it
 * cannot drift from the dictionaries, and a test compares the file with this function's output.
 * Every dictionary that defines a number must give it the same name.
 */
export function renderDataElements(dictionaries: readonly Dictionary[]): string {
  const byNumber = new Map<number, { name: string; title: string; from: string }>();
  for (const dictionary of dictionaries) {
    for (const field of dictionary.fields) {
      if (field === undefined || field.number < 2) continue;   // 0 is the MTI, 1 the bitmap
      const known = byNumber.get(field.number);
      const { number, name, title } = field;
      assert(known === undefined || known.name === name,
        `DE ${number} is ${known?.name} in ${known?.from} and ${name} in ${dictionary.name}`);
      if (known === undefined) byNumber.set(number, { name, title, from: dictionary.name });
    }
  }
  const names = [...byNumber.values()].map((entry) => entry.name);
  assert(new Set(names).size === names.length, "every data element has a name of its own");
  const entries = [...byNumber.entries()].sort(([a], [b]) => a - b).flatMap(([number, entry]) => [
    `  /** DE ${number}: ${entry.title} */`,
    `  ${entry.name}: ${number},`,
  ]);
  return [
    "// Generated from the field dictionaries in protocols/iso8583/ by `npm run gen:iso8583`;",
    "// do not edit: test/protocols/iso8583/data-elements.test.ts fails when it and they differ.",
    "",
    "/** ISO 8583 data element numbers by standard name: `de.retrievalReferenceNumber` is 37. */",
    "export const de = {",
    ...entries,
    "} as const;",
    "",
    "export type DataElementName = keyof typeof de;",
    "",
  ].join("\n");
}
