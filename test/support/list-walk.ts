import { expect } from "vitest";
import type { ApiClient } from "./api-client.ts";

/**
 * Walks a list of the HTTP API to its end, page by page with each page's next_cursor, calling
 * `betweenPages` after every page (new items arrive there). Returns the ids in the order seen.
 */
export async function walkList(
  client: ApiClient, path: string, idOf: (item: Record<string, unknown>) => string,
  betweenPages: (pageNumber: number) => Promise<void>,
): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const joiner = path.includes("?") ? "&" : "?";
  do {
    const page = await client.get(`${path}${cursor === null ? "" : `${joiner}cursor=${cursor}`}`);
    expect(page.status, page.text).toBe(200);
    seen.push(...(page.json.data as Array<Record<string, unknown>>).map(idOf));
    cursor = page.json.next_cursor as string | null;
    expect(page.json.has_more).toBe(cursor !== null);
    pages++;
    await betweenPages(pages);
  } while (cursor !== null);
  return { seen, pages };
}

/** What a walk must show: no item twice, every item that existed when it began. */
export function expectStableWalk(seen: readonly string[], existing: readonly string[]): void {
  const distinct = new Set(seen);
  expect(distinct.size, "an item seen twice").toBe(seen.length);
  expect(existing.filter((id) => !distinct.has(id)), "items skipped").toEqual([]);
}

/** The ids of every item of a list, walked without arrivals. */
export async function allIds(
  client: ApiClient, path: string, idOf: (item: Record<string, unknown>) => string,
): Promise<string[]> {
  return (await walkList(client, path, idOf, async () => {})).seen;
}
