import { createHash } from "node:crypto";

/**
 * Fingerprint of a record's economic content: sha256 over the named fields in a fixed order,
 * each value normalized (trimmed, inner spaces folded). Field names are part of the hash so that
 * moving a value from one field to another changes the fingerprint. Never a hash of raw bytes:
 * a re-batched or re-wrapped record must keep its fingerprint.
 */
export function fingerprintOf(fields: Record<string, string | bigint | number | undefined>): string {
  const hash = createHash("sha256");
  for (const name of Object.keys(fields).sort()) {
    const value = fields[name];
    const text = value === undefined ? "" : String(value).trim().replace(/\s+/g, " ");
    hash.update(name);
    hash.update("\u0000");
    hash.update(text);
    hash.update("\u0001");
  }
  return hash.digest("hex");
}
