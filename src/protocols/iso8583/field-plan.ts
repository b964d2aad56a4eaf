import type { Dictionary, FieldDefinition } from "./types.ts";

/**
 * What the codec's fast path needs to know about each field, worked out once per dictionary
 * instead of once per field per message (decision 0048). Only the common case has a plan: a
 * character field (n, a, an, ans, ns, as, z) in ASCII, fixed or behind an ASCII length prefix,
 * without subfields. Every other field (BCD, EBCDIC, binary, x+n amounts, composites) goes
 * through the generic field codec, which also stays the only author of findings: when the fast
 * path meets anything it does not accept, it hands the field to the generic path, so a bad
 * field gets exactly the finding it always got.
 */
export interface AsciiTextPlan {
  readonly definition: FieldDefinition;
  readonly fieldNumber: number;
  readonly lengthMax: number;      // exact length (fixed) or maximum (variable), in characters
  readonly prefixDigits: number;   // ASCII length digits in front of the value; 0 for a fixed field
  readonly numeric: boolean;       // type n: digits only (which also keeps NUL out)
}

/** Indexed by field number, like Dictionary.fields; undefined where the generic path applies. */
export type FieldPlans = readonly (AsciiTextPlan | undefined)[];

const asciiPrefixDigits: Readonly<Record<string, number>> = { fixed: 0, L: 1, LL: 2, LLL: 3, LLLL: 4 };

function asciiTextPlan(definition: FieldDefinition): AsciiTextPlan | undefined {
  if (definition.encoding !== "ascii" || definition.composite !== undefined) return undefined;
  if (definition.type === "b" || definition.type === "x+n") return undefined;
  if (definition.prefix !== "fixed" && definition.prefixEncoding !== "ascii") return undefined;
  const prefixDigits = asciiPrefixDigits[definition.prefix] as number;
  return { definition, fieldNumber: definition.number, lengthMax: definition.length, prefixDigits, numeric: definition.type === "n" };
}

// Keyed by the dictionary's field table, which the plans derive from (dictionaries are immutable).
const plansByFields = new WeakMap<Dictionary["fields"], FieldPlans>();

export function fieldPlansOf(dictionary: Dictionary): FieldPlans {
  let plans = plansByFields.get(dictionary.fields);
  if (plans === undefined) {
    plans = dictionary.fields.map((definition) => (definition === undefined ? undefined : asciiTextPlan(definition)));
    plansByFields.set(dictionary.fields, plans);
  }
  return plans;
}
