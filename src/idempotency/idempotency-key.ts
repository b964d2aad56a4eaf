import { limits } from "../config/limits.ts";
import type { ErrorCode } from "../errors/catalog.ts";

export type KeyParse = { ok: true; key: string } | { ok: false; code: ErrorCode; message: string };

/**
 * The Idempotency-Key header: 1 to 255 visible ASCII characters. The IETF draft defines the
 * value as a structured-field string ("..."), so a quoted key is accepted and unquoted; a bare
 * token is accepted too, as most clients send one.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): KeyParse {
  if (header === undefined) return { ok: false, code: "IDEMPOTENCY_KEY_MISSING", message: "the Idempotency-Key header is required on this endpoint" };
  if (Array.isArray(header)) {
    if (header.length !== 1) return { ok: false, code: "IDEMPOTENCY_KEY_MULTIPLE", message: "send exactly one Idempotency-Key header" };
    header = header[0] ?? "";
  }
  // Node joins repeated unknown headers with ", "; a comma cannot be part of a key we accept.
  if (header.includes(",")) return { ok: false, code: "IDEMPOTENCY_KEY_MULTIPLE", message: "send exactly one Idempotency-Key header" };
  let key = header.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (key.length === 0 || key.length > limits.http.idempotencyKeyCharsMax || !/^[\x21-\x7e]+$/.test(key) || key.includes('"')) {
    return { ok: false, code: "IDEMPOTENCY_KEY_INVALID", message: `the Idempotency-Key must be 1 to ${limits.http.idempotencyKeyCharsMax} visible ASCII characters` };
  }
  return { ok: true, key };
}
