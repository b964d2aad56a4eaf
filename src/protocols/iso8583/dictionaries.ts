import iso87Ascii from "../../../protocols/iso8583/iso87-ascii.json" with { type: "json" };
import iso87Binary from "../../../protocols/iso8583/iso87-binary.json" with { type: "json" };
import jposIso87a from "../../../protocols/iso8583/jpos-iso87a.json" with { type: "json" };
import jposIso87b from "../../../protocols/iso8583/jpos-iso87b.json" with { type: "json" };
import moovSpec87Ascii from "../../../protocols/iso8583/moov-spec87ascii.json" with { type: "json" };
import { loadDictionary } from "./dictionary.ts";
import type { Dictionary } from "./types.ts";

/**
 * The dictionaries clearline ships, by name. ISO 8583:1987 ASCII is the default of the endpoint
 * and the tools. jpos-iso87a / jpos-iso87b lay out every field as jPOS's ISO87APackager /
 * ISO87BPackager do, byte for byte; moov-spec87ascii as moov-io/iso8583's Spec87ASCII.
 * The default is NOT jPOS's iso87ascii: DE 55, 93 and 96 keep the layout peers and stored
 * messages already use (its "notes" say why); a jPOS ASCII peer is configured with jpos-iso87a.
 */
export const iso87AsciiDictionary: Dictionary = loadDictionary(iso87Ascii);
export const iso87BinaryDictionary: Dictionary = loadDictionary(iso87Binary);
export const jposIso87aDictionary: Dictionary = loadDictionary(jposIso87a);
export const jposIso87bDictionary: Dictionary = loadDictionary(jposIso87b);
export const moovSpec87AsciiDictionary: Dictionary = loadDictionary(moovSpec87Ascii);
export const defaultDictionary: Dictionary = iso87AsciiDictionary;

export const shippedDictionaries: ReadonlyMap<string, Dictionary> = new Map(
  [iso87AsciiDictionary, iso87BinaryDictionary, jposIso87aDictionary, jposIso87bDictionary, moovSpec87AsciiDictionary]
    .map((dictionary) => [dictionary.name, dictionary]),
);

export function dictionaryByName(name: string): Dictionary | undefined {
  return shippedDictionaries.get(name);
}
