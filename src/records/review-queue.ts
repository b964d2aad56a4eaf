import { limits } from "../config/limits.ts";
import { pageOf, rowsToAsk, type ListPage, type ListPlace } from "../db/list-place.ts";
import type { Queryable } from "../db/pool.ts";
import { achFileCreationOfKey } from "../normalize/from-ach.ts";
import type { ReviewReason, ReviewState } from "./record-states.ts";
import {
  selectReviewById, selectReviewContexts, selectReviews, selectReviewsByIds, selectReviewsPage,
  selectSuspensePostings,
  type ReviewContextRow, type ReviewRow,
} from "./store/reviews.ts";

// open, or what a person decided (docs/decisions/0011); `released` only on items decided before release went away.
export { reviewStates, type ReviewState } from "./record-states.ts";
export type { ReviewRow } from "./store/reviews.ts";

/** A conflict or suspect waiting for a person (or decided by one). */
export interface ReviewItem {
  review_id: string;
  tenant_id: string;
  reason: ReviewReason;
  state: ReviewState;
  natural_key: string;
  file_id: string;
  record_index: number;
  position: string | null;
  kind: string;
  amount_minor: string;
  currency: string;
  matched_ref: string | null;
  decision_reason: string | null;
  operator: string | null;
  decided_at: string | null;
  transfer_key: string | null;
  compensation_key: string | null;
  created_at: string;
  detail: string | null;                   // why it was held, as the ingest outcome says it
  matched_file: MatchedFile | null;        // the OTHER file whose record caused this item (none: same file, or not a record)
}

/**
 * The other file behind a conflict (its record first used this key) or a suspect (its record has
 * this content): an originator reusing a trace across files shows here, so the operator can tell
 * a correction (replace) from a new payment under a reused trace (apply as new).
 */
export interface MatchedFile {
  file_id: string;
  name: string;
  created: string | null;                  // ACH file creation date and time from its header; null for other formats
  received_at: string;
  record_index: number;
}

export function itemOf(row: ReviewRow): ReviewItem {
  return {
    review_id: row.review_id, tenant_id: row.tenant_id, reason: row.reason, state: row.state, natural_key: row.natural_key, file_id: row.file_id,
    record_index: row.record_index, position: row.position, kind: row.record.record.kind, amount_minor: row.record.record.amount,
    currency: row.record.record.currency, matched_ref: row.matched_ref, decision_reason: row.decision_reason, operator: row.operator,
    decided_at: row.decided_at?.toISOString() ?? null, transfer_key: row.transfer_key, compensation_key: row.compensation_key,
    created_at: row.created_at.toISOString(), detail: row.detail, matched_file: matchedFileOf(row),
  };
}

function matchedFileOf(row: ReviewRow): MatchedFile | null {
  if (row.matched_file_id === null || row.matched_file_name === null || row.matched_file_received_at === null || row.matched_record_index === null) return null;
  return {
    file_id: row.matched_file_id, name: row.matched_file_name, created: achFileCreationOfKey(row.matched_file_identity ?? "") ?? null,
    received_at: row.matched_file_received_at.toISOString(), record_index: row.matched_record_index,
  };
}

/**
 * The review items of these ids as the HTTP API lists them: the data of the record.conflict and
 * record.suspect events, read in the transaction that holds them (docs/decisions/0107).
 */
export async function reviewItemsByIds(
  db: Queryable, tenantId: string, reviewIds: readonly string[],
): Promise<Map<string, ReviewItem>> {
  if (reviewIds.length === 0) return new Map();
  const rows = await selectReviewsByIds(db, tenantId, [...new Set(reviewIds)]);
  return new Map(rows.map((row) => [row.review_id, itemOf(row)]));
}

/** Open items (or all, with `state`), oldest first; without a tenant, every tenant's. */
export async function listReviews(db: Queryable, options: { tenantId?: string; state?: ReviewState | "all" } = {}): Promise<ReviewItem[]> {
  const rows = await selectReviews(db, options.tenantId ?? null, options.state ?? "open", limits.ingest.listRowsMax);
  return rows.map(itemOf);
}

/** What a page of the review items is filtered by (GET /v1/reviews); `after` a place seen last. */
export interface ReviewPageQuery {
  after?: ListPlace | undefined;
  state: ReviewState | "all" | "decided";
  reason?: ReviewReason | undefined;
  partnerId?: string | undefined;
  createdFrom?: string | undefined;
  createdBefore?: string | undefined;
  limit: number;
}

/** A page of the tenant's review items, the oldest first (creation time, then id). */
export async function reviewsPage(
  db: Queryable, tenantId: string, query: ReviewPageQuery,
): Promise<ListPage<ReviewItem>> {
  const rows = await selectReviewsPage(db, tenantId, {
    after: query.after ?? null, state: query.state, reason: query.reason ?? null,
    partnerId: query.partnerId ?? null, createdFrom: query.createdFrom ?? null,
    createdBefore: query.createdBefore ?? null,
  }, rowsToAsk(query.limit));
  return pageOf(rows, query.limit, itemOf, (row) => ({ position: row.place, id: row.review_id }));
}

/** What a held record was held against: the content its dedup mark stands for now, and where. */
export interface StandingRecord {
  natural_key: string;
  kind: string;
  amount_minor: string;
  currency: string;
  value_date: string;
  file_id: string;
  file_name: string | null;
  position: string;
}

/** A review item as a person decides it: the held arrival beside what it was held against. */
export interface ReviewQueueItem extends ReviewItem {
  value_date: string;
  held_file_name: string | null;
  standing: StandingRecord | null;
}

function standingOf(row: ReviewContextRow | undefined): StandingRecord | null {
  if (!row || row.standing_key === null || row.standing_kind === null) return null;
  return {
    natural_key: row.standing_key, kind: row.standing_kind,
    amount_minor: row.standing_amount_minor ?? "0", currency: row.standing_currency ?? "",
    value_date: row.standing_value_date ?? "", file_id: row.standing_file_id ?? "",
    file_name: row.standing_file_name, position: row.standing_position ?? "",
  };
}

/**
 * The review queue of a tenant as the console shows it: open items, decided ones, or all (or the
 * one item `reviewId` names), oldest first, each with the record it was held against.
 */
export async function reviewQueue(
  db: Queryable, tenantId: string,
  options: { state: ReviewState | "all" | "decided"; reviewId?: string },
): Promise<ReviewQueueItem[]> {
  const rows = options.reviewId === undefined
    ? await selectReviews(db, tenantId, options.state, limits.ingest.listRowsMax)
    : await selectReviewById(db, options.reviewId, tenantId);
  const contexts = new Map((await selectReviewContexts(db, tenantId, rows.map((r) => r.review_id)))
    .map((c) => [c.review_id, c]));
  return rows.map((row) => {
    const context = contexts.get(row.review_id);
    return {
      ...itemOf(row), value_date: row.record.record.valueDate,
      held_file_name: context?.held_file_name ?? null, standing: standingOf(context),
    };
  });
}

/**
 * The review items with this id: one, none, or one per tenant when no tenant is named and
 * several hold the id (the caller asks which).
 */
export async function reviewItemsById(
  db: Queryable, reviewId: string, tenantId: string | undefined,
): Promise<ReviewItem[]> {
  return (await selectReviewById(db, reviewId, tenantId ?? null)).map(itemOf);
}

/** Records posted to a partner's suspense account because their counterparty matched no alias: listed for operations. */
export async function listSuspensePostings(db: Queryable, options: { tenantId?: string } = {}): Promise<Array<{ tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: string; currency: string; transfer_key: string; detail: string }>> {
  const rows = await selectSuspensePostings(db, options.tenantId ?? null, limits.ingest.listRowsMax);
  return rows.map((r) => ({ ...r, amount_minor: r.amount_minor.toString() }));
}
