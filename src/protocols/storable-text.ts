/**
 * Text that PostgreSQL cannot store: `text` and `jsonb` refuse U+0000, and an unpaired UTF-16
 * surrogate has no UTF-8 form (jsonb refuses its `\ud800` escape; a text column would silently
 * get U+FFFD instead, so the stored value would differ from the one received). Such text is bad
 * input, refused where it enters with its position, never a failure deep in a transaction.
 */
export interface UnstorableCharacter {
  index: number;                          // UTF-16 code unit offset in the text
  what: "NUL" | "unpaired surrogate";
}

// Without the `u` flag the pattern sees UTF-16 code units, which is what a lone surrogate is.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function firstUnstorableCharacter(text: string): UnstorableCharacter | undefined {
  const found = unstorable.exec(text);
  if (!found) return undefined;
  return { index: found.index, what: found[0] === "\u0000" ? "NUL" : "unpaired surrogate" };
}

export function describeUnstorable(found: UnstorableCharacter): string {
  return found.what === "NUL"
    ? `holds a NUL character (U+0000) at offset ${found.index}, which cannot be stored`
    : `holds an unpaired UTF-16 surrogate at offset ${found.index}, which is not a character and cannot be stored`;
}
