import { limits } from "../config/limits.ts";
import type { ListPlace } from "../db/list-place.ts";

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

/**
 * A cursor naming the place of an item in a list ordered by a monotonic position and then its id
 * (src/db/list-place.ts): the next page starts after it.
 */
const PLACE_PATTERN = /^(\d{1,19})\/([\s\S]+)$/;
const POSITION_MAX = 2n ** 63n - 1n; // a bigint column, and every transaction id there will be

export function encodePlaceCursor(place: ListPlace): string {
  return encodePageCursor(`${place.position}/${place.id}`);
}

/** The place a cursor starts after, or undefined when it is not a place this API gave out. */
export function decodePlaceCursor(cursor: string): ListPlace | undefined {
  const key = decodePageCursor(cursor);
  const match = key === undefined ? null : PLACE_PATTERN.exec(key);
  if (!match?.[1] || match[2] === undefined || BigInt(match[1]) > POSITION_MAX) return undefined;
  return { position: match[1], id: match[2] };
}
