import { createHash } from "node:crypto";

/**
 * Fingerprint of a record's economic content: sha256 over the named fields in a fixed order,
 * each value normalized (trimmed, inner spaces folded). Field names are part of the hash so that
 * moving a value from one field to another changes the fingerprint. Never a hash of raw bytes:
 * a re-batched or re-wrapped record must keep its fingerprint.
 */
export function fingerprintOf(fields: Record<string, string | bigint | number | undefined>): string {
  // The hashed text is built first and hashed in one update: the same bytes as an update per
  // part (the separators keep parts from joining), at a fortieth of the calls into the hash
  // (44 per ACH entry were a tenth of a re-ingest's client CPU; docs/decisions/0053).
  let hashed = "";
  for (const name of Object.keys(fields).sort()) {
    const value = fields[name];
    const text = value === undefined ? "" : String(value).trim().replace(/\s+/g, " ");
    hashed += `${name}\u0000${text}\u0001`;
  }
  return createHash("sha256").update(hashed).digest("hex");
}
