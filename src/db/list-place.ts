import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";

/**
 * Keyset pages of the lists the HTTP API browses (payments, refunds, files, reviews, transfers,
 * reconciliation differences): rows in the order of a monotonic position (a creation time, a
 * transaction id) and then their id, a page starting after the place of the last row the client
 * saw. Positions and ids never change, so a walk sees no row twice and skips none that existed
 * when it began; rows added meanwhile come after them and are seen too. Each owner writes its own
 * SQL with these fragments; nothing here names a table.
 */
export interface ListPlace {
  /** A whole number as text: microseconds since the epoch, or a transaction id. */
  position: string;
  id: string;
}

/** One page of a list, and the place the next one starts after (none: this was the last). */
export interface ListPage<T> {
  items: T[];
  next: ListPlace | null;
}

/** A timestamp column as a position: whole microseconds since the epoch, exact (no float). */
export function microsOfSql(column: string): string {
  return `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;
}

/** The timestamp a position names, from a parameter holding whole microseconds as text. */
export function instantOfMicrosSql(parameter: string): string {
  return `(timestamptz 'epoch' + (${parameter}::bigint / 1000000) * interval '1 second'`
    + ` + (${parameter}::bigint % 1000000) * interval '1 microsecond')`;
}

/** The rows a page query asks for: one past the page, to tell whether another follows. */
export function rowsToAsk(limit: number): number {
  assert(Number.isInteger(limit) && limit >= 1 && limit <= limits.http.listPageItemsMax,
    "a list page is bounded");
  return limit + 1;
}

/** The page of `limit` rows (asked one more) with the place the next starts after. */
export function pageOf<R, T>(
  rows: readonly R[], limit: number, itemOf: (row: R) => T, placeOf: (row: R) => ListPlace,
): ListPage<T> {
  assert(rows.length <= limit + 1, "a page query asks one row past the page");
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  return { items: kept.map(itemOf), next: rows.length > limit && last ? placeOf(last) : null };
}
