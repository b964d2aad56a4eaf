import iso87Ascii from "../../../protocols/iso8583/iso87-ascii.json" with { type: "json" };
import iso87Binary from "../../../protocols/iso8583/iso87-binary.json" with { type: "json" };
import { loadDictionary } from "./dictionary.ts";
import type { Dictionary } from "./types.ts";

/** The dictionaries clearline ships, by name. ISO 8583:1987 ASCII is the default of the endpoint and the tools. */
export const iso87AsciiDictionary: Dictionary = loadDictionary(iso87Ascii);
export const iso87BinaryDictionary: Dictionary = loadDictionary(iso87Binary);
export const defaultDictionary: Dictionary = iso87AsciiDictionary;

export const shippedDictionaries: ReadonlyMap<string, Dictionary> = new Map([
  [iso87AsciiDictionary.name, iso87AsciiDictionary],
  [iso87BinaryDictionary.name, iso87BinaryDictionary],
]);

export function dictionaryByName(name: string): Dictionary | undefined {
  return shippedDictionaries.get(name);
}
