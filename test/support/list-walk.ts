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

/** What arrives between the pages of a walk, each call returning the ids it added. */
export interface Arrivals {
  /** Items that sort after every existing one (created later): a walk sees them at its end. */
  after(pageNumber: number): Promise<string[]>;
  /** Items that sort before the walk's place (a late commit): the next walk sees them. */
  before?(pageNumber: number): Promise<string[]>;
  /** Items placed among the existing ones: seen once if ahead of the walk's place, else not. */
  among?(pageNumber: number): Promise<string[]>;
}

/**
 * Walks a list of `existing` items (at least ten pages of them) while items arrive between its
 * pages, and holds it to the paging contract: no item twice, every existing one seen in its
 * order, those added after them seen at the end in order (but for the last page's: they arrived
 * after the walk ended), none of those that sort before the walk's place.
 */
export async function expectStablePagingWhileItemsArrive(
  client: ApiClient, path: string, idOf: (item: Record<string, unknown>) => string,
  existing: readonly string[], arrivals: Arrivals,
): Promise<void> {
  const afterByPage: string[][] = [];
  const before: string[] = [];
  const { seen, pages } = await walkList(client, path, idOf, async (pageNumber) => {
    afterByPage.push(await arrivals.after(pageNumber));
    if (arrivals.before) before.push(...await arrivals.before(pageNumber));
    if (arrivals.among) await arrivals.among(pageNumber);
  });
  expectStableWalk(seen, existing);
  const existingIds = new Set(existing);
  expect(seen.filter((id) => existingIds.has(id))).toEqual(existing);
  expect(pages).toBeGreaterThanOrEqual(10);
  const afterIds = new Set(afterByPage.flat());
  expect(seen.filter((id) => afterIds.has(id))).toEqual(afterByPage.slice(0, -1).flat());
  const beforeIds = new Set(before);
  expect(seen.filter((id) => beforeIds.has(id))).toEqual([]);
}

/** Each query of the list refused with 400 request_invalid, nothing listed. */
export async function expectQueriesRefused(
  client: ApiClient, path: string, queries: readonly string[],
): Promise<void> {
  for (const query of queries) {
    const answer = await client.get(`${path}?${query}`);
    expect(answer.status, query).toBe(400);
    expect(answer.json.code, query).toBe("request_invalid");
  }
}

/** Each path answered 404 with the catalog code. */
export async function expectNotFound(
  client: ApiClient, paths: readonly string[], code: string,
): Promise<void> {
  for (const path of paths) {
    const missing = await client.get(path);
    expect(missing.status, path).toBe(404);
    expect(missing.json.code, path).toBe(code);
  }
}
