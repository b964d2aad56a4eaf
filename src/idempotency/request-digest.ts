import { createHash } from "node:crypto";

export type Canonical = Record<string, string | null>;

/** Keys sorted, values strings: the same validated request always gives the same bytes. */
export function canonicalJson(request: Canonical): string {
  return JSON.stringify(Object.fromEntries(Object.keys(request).sort().map((k) => [k, request[k] ?? null])));
}

export function requestDigest(request: Canonical): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

/** Which fields differ between the request that first used a key and this one. */
export function differingFields(stored: Canonical, current: Canonical): string[] {
  const names = new Set([...Object.keys(stored), ...Object.keys(current)]);
  return [...names].filter((name) => (stored[name] ?? null) !== (current[name] ?? null)).sort();
}
