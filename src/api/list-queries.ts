import { z } from "zod";
import { limits } from "../config/limits.ts";
import { clientReference } from "../payments/payment-request.ts";

/**
 * The query of every list the HTTP API pages (issue 33 item 7): `limit` and `cursor`, a creation
 * range, and the filters that fit each resource. Validation and /openapi.json both come from
 * these zod schemas. A list answers `{ data, has_more, next_cursor }`, the oldest item first.
 */
const instant = z.union([z.iso.date(), z.iso.datetime({ offset: true })])
  .describe("a date (YYYY-MM-DD: midnight UTC) or an RFC 3339 date-time with its offset");

const paging = {
  limit: z.coerce.number().int().min(1).max(limits.http.listPageItemsMax)
    .default(limits.http.listPageItemsDefault).describe("items on the page"),
  cursor: z.string().min(1).max(limits.http.pageCursorCharsMax).optional()
    .describe("the next_cursor of the page before (opaque)"),
};

const created = (what: string) => ({
  created_from: instant.optional().describe(`${what} at or after this instant`),
  created_before: instant.optional().describe(`${what} before this instant`),
});

const settled = z.enum(["succeeded", "declined"]);

/** GET /v1/payments: a page of payments; with client_reference, that one intent's status. */
export const paymentListQuery = z.strictObject({
  client_reference: clientReference.optional()
    .describe("one intent's status (the payment, or in_progress): no list parameter beside it"),
  ...paging, status: settled.optional(), ...created("created"),
});

export const refundListQuery = z.strictObject({
  ...paging, status: settled.optional(),
  payment_id: z.string().min(1).max(64).optional().describe("the refunds of this payment"),
  ...created("created"),
});

export const fileListQuery = z.strictObject({
  ...paging,
  status: z.enum(["received", "processing", "done", "rejected"]).optional(),
  partner: z.string().min(1).max(200).optional().describe("the clearing partner, by id or name"),
  source: z.enum(["drop_folder", "sftp", "http", "cli"]).optional(),
  ...created("received"),
});

export const fileRecordListQuery = z.strictObject({
  ...paging,
  outcome: z.enum(["applied", "duplicate", "conflict", "suspect", "rejected", "orphan"]).optional(),
});

export const reviewListQuery = z.strictObject({
  ...paging,
  state: z.enum(["open", "released", "replaced", "applied_as_new", "refused", "decided", "all"])
    .default("open").describe("open by default; decided: every state but open"),
  reason: z.enum(["conflict", "suspect", "late_return"]).optional(),
  partner: z.string().min(1).max(200).optional().describe("the clearing partner, by id or name"),
  ...created("held"),
});

const date = z.iso.date().describe("YYYY-MM-DD");

export const transferListQuery = z.strictObject({
  ...paging,
  kind: z.string().min(1).max(64).optional().describe("the transfer's kind (payment, refund, ...)"),
  value_from: date.optional().describe("value date on or after this date"),
  value_to: date.optional().describe("value date on or before this date"),
  ...created("posted"),
});

export const differenceListQuery = z.strictObject({
  ...paging,
  state: z.enum(["open", "corrected", "explained", "resolved", "all"]).default("open")
    .describe("open by default"),
  reason: z.enum(["theirs_only", "ours_only", "amount_differs", "date_outside_window",
    "duplicate_on_their_side", "foreign_currency"]).optional(),
  account: z.string().min(1).max(200).optional().describe("the settlement account"),
  ...created("first found by a run"),
});

/** An instant of a query as the database reads it: a date is midnight UTC, not local time. */
export function instantOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
}
