import { limits } from "../config/limits.ts";

/**
 * Cursor paging of the HTTP API's lists: a page ends at an item, and the next page starts after
 * that item's key. Keys are unique and never change, so paging while items are added shows no
 * item twice and skips none that existed when paging began (an item added behind the cursor is
 * seen by the next walk). The cursor is opaque to clients (base64url of a versioned text), so the
 * key it carries can change form later without breaking them.
 */
const CURSOR_VERSION = "v1:";

export function encodePageCursor(afterKey: string): string {
  return Buffer.from(`${CURSOR_VERSION}${afterKey}`, "utf8").toString("base64url");
}

/** The key a cursor starts after, or undefined when it is not one this API gave out. */
export function decodePageCursor(cursor: string): string | undefined {
  if (cursor.length === 0 || cursor.length > limits.http.pageCursorCharsMax) return undefined;
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  return text.startsWith(CURSOR_VERSION) ? text.slice(CURSOR_VERSION.length) : undefined;
}
