import type { z } from "zod";
import type { ListPage, ListPlace } from "../db/list-place.ts";
import type { Queryable } from "../db/pool.ts";
import { findPartner } from "../partners/partners.ts";
import { describeIssues } from "../errors/schema-issues.ts";
import { jsonReply, problemReply, type Reply } from "../requests/reply.ts";
import { decodePlaceCursor, encodePlaceCursor } from "./page-cursor.ts";
import type { Answer } from "./route-schema.ts";

/** A list's query, read: its parameters and the place its cursor starts after; or the 400. */
export type ListQueryRead<T> =
  | { ok: true; query: T; after: ListPlace | undefined }
  | { ok: false; reply: Reply };

export function readListQuery<T extends { cursor?: string | undefined }>(
  schema: z.ZodType<T>, raw: unknown, what: string,
): ListQueryRead<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, reply: problemReply("REQUEST_INVALID", `the ${what} query is invalid`,
      { errors: describeIssues(parsed.error) }) };
  }
  const { cursor } = parsed.data;
  const after = cursor === undefined ? undefined : decodePlaceCursor(cursor);
  if (cursor !== undefined && after === undefined) {
    const errors = [{ field: "cursor", message: "unknown cursor" }];
    return {
      ok: false,
      reply: problemReply("REQUEST_INVALID", "the cursor is not one this API gave out", { errors }),
    };
  }
  return { ok: true, query: parsed.data, after };
}

/** A page as every list answers it: `{ data, has_more, next_cursor }`. */
export function listReply<T>(page: ListPage<T>, view: (item: T) => unknown): Reply {
  return jsonReply(200, {
    data: page.items.map(view),
    has_more: page.next !== null,
    next_cursor: page.next === null ? null : encodePlaceCursor(page.next),
  });
}

const EXAMPLE_CURSOR = "djE6MTc2NDkwMDAwMDAwMDAwMC9leGFtcGxl";

/** The OpenAPI answer of a list of `item`, with an example page of one. */
export function listAnswer(
  what: string, item: Record<string, unknown>, example: Record<string, unknown>,
): Answer {
  return {
    description: `{ data: [${what}], has_more, next_cursor }, the oldest first: next_cursor is `
      + "null on the last page; pass it as cursor for the next one",
    schema: {
      type: "object", required: ["data", "has_more", "next_cursor"],
      properties: {
        data: { type: "array", items: item }, has_more: { type: "boolean" },
        next_cursor: { type: ["string", "null"] },
      },
    },
    example: { data: [example], has_more: true, next_cursor: EXAMPLE_CURSOR },
  };
}

/** The OpenAPI answer of one item, the same shape as the list's. */
export function itemAnswer(
  what: string, item: Record<string, unknown>, example: Record<string, unknown>,
): Answer {
  return { description: what, schema: item, example };
}

/** The partner id a filter names by id or name; one that is no partner filters every item out. */
export async function partnerIdOfFilter(
  db: Queryable, tenantId: string, partner: string | undefined,
): Promise<string | undefined> {
  if (partner === undefined) return undefined;
  return (await findPartner(db, tenantId, partner))?.partnerId ?? partner;
}
