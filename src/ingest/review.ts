import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import { achFileCreationOfKey } from "../normalize/from-ach.ts";
import type { ReviewRecord } from "../records/review-id.ts";

/** open, or what a person decided (docs/decisions/0011); `released` only on items decided before release went away. */
export type ReviewState = "open" | "released" | "replaced" | "applied_as_new" | "refused";
export const reviewStates: readonly ReviewState[] = ["open", "released", "replaced", "applied_as_new", "refused"];

/** A conflict or suspect waiting for a person (or decided by one). */
export interface ReviewItem {
  review_id: string;
  tenant_id: string;
  reason: "conflict" | "suspect";
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

export interface ReviewRow {
  review_id: string;
  tenant_id: string;
  reason: "conflict" | "suspect";
  state: ReviewState;
  natural_key: string;
  fingerprint: string;
  file_id: string;
  record_index: number;
  partner_id: string;
  record: ReviewRecord;
  matched_ref: string | null;
  decision_reason: string | null;
  transfer_key: string | null;
  created_at: Date;
  decided_at: Date | null;
  position: string | null;
  operator: string | null;
  compensation_key: string | null;
  detail: string | null;
  matched_file_id: string | null;
  matched_file_name: string | null;
  matched_file_identity: string | null;
  matched_file_received_at: Date | null;
  matched_record_index: number | null;
}

export const SELECT_REVIEW = `SELECT r.review_id, r.tenant_id, r.reason, r.state, r.natural_key, r.fingerprint, r.file_id, r.record_index, r.partner_id, r.record,
  r.matched_ref, r.decision_reason, r.transfer_key, r.created_at, r.decided_at, o.position, d.operator, d.compensation_key, o.detail,
  f.file_id AS matched_file_id, f.original_name AS matched_file_name, f.identity_key AS matched_file_identity, f.received_at AS matched_file_received_at,
  k.record_index AS matched_record_index
  FROM ingest_review r LEFT JOIN ingest_outcome o ON o.tenant_id = r.tenant_id AND o.file_id = r.file_id AND o.record_index = r.record_index
  LEFT JOIN review_decision d ON d.tenant_id = r.tenant_id AND d.review_id = r.review_id
  LEFT JOIN ingest_record_key k ON k.tenant_id = r.tenant_id AND k.file_id <> r.file_id
   AND k.natural_key = CASE WHEN r.reason = 'conflict' THEN r.natural_key ELSE r.matched_ref END
  LEFT JOIN ingest_file f ON f.tenant_id = k.tenant_id AND f.file_id = k.file_id`;

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

/** Open items (or all, with `state`), oldest first; without a tenant, every tenant's. */
export async function listReviews(db: Queryable, options: { tenantId?: string; state?: ReviewState | "all" } = {}): Promise<ReviewItem[]> {
  const state = options.state ?? "open";
  const { rows } = await db.query<ReviewRow>(
    `${SELECT_REVIEW} WHERE ($1::text IS NULL OR r.tenant_id = $1) AND ($2::text = 'all' OR r.state = $2)
      ORDER BY r.created_at, r.review_id LIMIT $3`,
    [options.tenantId ?? null, state, limits.ingest.listRowsMax]);
  return rows.map(itemOf);
}

/** Records posted to a partner's suspense account because their counterparty matched no alias: listed for operations. */
export async function listSuspensePostings(db: Queryable, options: { tenantId?: string } = {}): Promise<Array<{ tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: string; currency: string; transfer_key: string; detail: string }>> {
  const { rows } = await db.query<{ tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: bigint; currency: string; transfer_key: string; detail: string }>(
    `SELECT tenant_id, file_id, position, natural_key, amount_minor, currency, transfer_key, detail FROM ingest_outcome
      WHERE ($1::text IS NULL OR tenant_id = $1) AND outcome = 'applied' AND code = 'INGEST_COUNTERPARTY_UNRESOLVED'
      ORDER BY created_at DESC LIMIT $2`,
    [options.tenantId ?? null, limits.ingest.listRowsMax]);
  return rows.map((r) => ({ ...r, amount_minor: r.amount_minor.toString() }));
}
