/**
 * Review items and decisions (record_review, review_decision) and the dedup-mark reads and writes
 * a decision makes; the compensation a replace posts is linked by the ledger.
 */
import { instantOfMicrosSql, microsOfSql, type ListPlace } from "../../db/list-place.ts";
import type { Queryable } from "../../db/pool.ts";
import { storedNamesOf } from "../../errors/catalog.ts";
import type { ReviewRecord } from "../review-id.ts";
import type { KeyState, ReviewReason, ReviewState } from "../record-states.ts";

/** A review item as the queue and the decisions read it, with the file behind it. */
export interface ReviewRow {
  review_id: string; tenant_id: string; reason: ReviewReason; state: ReviewState; natural_key: string; fingerprint: string;
  file_id: string; record_index: number; partner_id: string; record: ReviewRecord; matched_ref: string | null; decision_reason: string | null;
  transfer_key: string | null; created_at: Date; decided_at: Date | null; position: string | null; operator: string | null;
  compensation_key: string | null; detail: string | null; matched_file_id: string | null; matched_file_name: string | null;
  matched_file_identity: string | null; matched_file_received_at: Date | null; matched_record_index: number | null;
}

const SELECT_REVIEW = `SELECT r.review_id, r.tenant_id, r.reason, r.state, r.natural_key, r.fingerprint, r.file_id, r.record_index, r.partner_id, r.record,
  r.matched_ref, r.decision_reason, r.transfer_key, r.created_at, r.decided_at, o.position, d.operator, d.compensation_key, o.detail,
  f.file_id AS matched_file_id, f.original_name AS matched_file_name, f.identity_key AS matched_file_identity, f.received_at AS matched_file_received_at,
  k.record_index AS matched_record_index
  FROM record_review r LEFT JOIN record_outcome o ON o.tenant_id = r.tenant_id
    AND o.file_id = r.file_id AND o.record_index = r.record_index
  LEFT JOIN review_decision d ON d.tenant_id = r.tenant_id AND d.review_id = r.review_id
  LEFT JOIN record_key k ON k.tenant_id = r.tenant_id AND k.file_id <> r.file_id
   AND k.natural_key = CASE WHEN r.reason = 'conflict' THEN r.natural_key ELSE r.matched_ref END
  LEFT JOIN received_file f ON f.tenant_id = k.tenant_id AND f.file_id = k.file_id`;

/** Items in a state (or all, or every decided one), oldest first; without a tenant, every tenant's. */
export async function selectReviews(
  db: Queryable, tenantId: string | null, state: ReviewState | "all" | "decided", rowsMax: number,
): Promise<ReviewRow[]> {
  const { rows } = await db.query<ReviewRow>(
    `${SELECT_REVIEW} WHERE ($1::text IS NULL OR r.tenant_id = $1)
       AND ($2::text = 'all' OR r.state = $2 OR ($2 = 'decided' AND r.state <> 'open'))
      ORDER BY r.created_at, r.review_id LIMIT $3`,
    [tenantId, state, rowsMax]);
  return rows;
}

/** What a page of review items is filtered by; `after` is the place of the last item seen. */
export interface ReviewPageFilter {
  after: ListPlace | null;
  state: ReviewState | "all" | "decided";
  reason: ReviewReason | null;
  partnerId: string | null;
  createdFrom: string | null;     // an instant, inclusive
  createdBefore: string | null;   // an instant, exclusive
}

/**
 * A page of the tenant's items, the oldest first by creation time and then id (the index of
 * migration 0038), each with its place; `rowsMax` rows at most.
 */
export async function selectReviewsPage(
  db: Queryable, tenantId: string, filter: ReviewPageFilter, rowsMax: number,
): Promise<Array<ReviewRow & { place: string }>> {
  const { rows } = await db.query<ReviewRow & { place: string }>(
    `${SELECT_REVIEW.replace("SELECT ", `SELECT ${microsOfSql("r.created_at")} AS place, `)}
      WHERE r.tenant_id = $1
        AND ($2::text IS NULL OR (r.created_at, r.review_id) > (${instantOfMicrosSql("$2")}, $3))
        AND ($4::text = 'all' OR r.state = $4 OR ($4 = 'decided' AND r.state <> 'open'))
        AND ($5::text IS NULL OR r.reason = $5)
        AND ($6::text IS NULL OR r.partner_id = $6)
        AND ($7::timestamptz IS NULL OR r.created_at >= $7)
        AND ($8::timestamptz IS NULL OR r.created_at < $8)
      ORDER BY r.created_at, r.review_id
      LIMIT $9`,
    [tenantId, filter.after?.position ?? null, filter.after?.id ?? null, filter.state,
      filter.reason, filter.partnerId, filter.createdFrom, filter.createdBefore, rowsMax]);
  return rows;
}

/** Where a held record and what it was held against arrived, and what that key stands for now. */
export interface ReviewContextRow {
  review_id: string; held_file_name: string | null; held_position: string | null;
  standing_key: string | null; standing_kind: string | null; standing_amount_minor: string | null;
  standing_currency: string | null; standing_value_date: string | null;
  standing_file_id: string | null; standing_file_name: string | null;
  standing_position: string | null;
}

/**
 * The context of items: the held arrival's file and line, and the dedup mark it was held against
 * (a conflict: its own key; a suspect: the key whose content it repeats) with the content that
 * mark stands for now and the file and line where the key first arrived.
 */
export async function selectReviewContexts(
  db: Queryable, tenantId: string, reviewIds: readonly string[],
): Promise<ReviewContextRow[]> {
  const { rows } = await db.query<ReviewContextRow>(
    `SELECT r.review_id, hf.original_name AS held_file_name, o.position AS held_position,
            k.natural_key AS standing_key, k.kind AS standing_kind,
            k.amount_minor::text AS standing_amount_minor, k.currency AS standing_currency,
            to_char(k.value_date, 'YYYY-MM-DD') AS standing_value_date,
            k.file_id AS standing_file_id, sf.original_name AS standing_file_name,
            k.position AS standing_position
       FROM record_review r
       LEFT JOIN record_outcome o ON o.tenant_id = r.tenant_id AND o.file_id = r.file_id
        AND o.record_index = r.record_index
       LEFT JOIN received_file hf ON hf.tenant_id = r.tenant_id AND hf.file_id = r.file_id
       LEFT JOIN record_key k ON k.tenant_id = r.tenant_id
        AND k.natural_key = CASE WHEN r.reason = 'conflict' THEN r.natural_key ELSE r.matched_ref END
       LEFT JOIN received_file sf ON sf.tenant_id = k.tenant_id AND sf.file_id = k.file_id
      WHERE r.tenant_id = $1 AND r.review_id = ANY($2::text[])`,
    [tenantId, reviewIds]);
  return rows;
}

/** One item by id (several when no tenant is named and tenants share the id). */
export async function selectReviewById(db: Queryable, reviewId: string, tenantId: string | null): Promise<ReviewRow[]> {
  const { rows } = await db.query<ReviewRow>(`${SELECT_REVIEW} WHERE r.review_id = $1 AND ($2::text IS NULL OR r.tenant_id = $2)`, [reviewId, tenantId]);
  return rows;
}

/** Items of one tenant by id, in no particular order (a chunk's held records, for their events). */
export async function selectReviewsByIds(
  db: Queryable, tenantId: string, reviewIds: readonly string[],
): Promise<ReviewRow[]> {
  const { rows } = await db.query<ReviewRow>(
    `${SELECT_REVIEW} WHERE r.tenant_id = $1 AND r.review_id = ANY ($2::text[])`,
    [tenantId, reviewIds]);
  return rows;
}

/** Locks the item's row (a concurrent decision waits, then sees ours) and reads its state. */
export async function lockReview(tx: Queryable, tenantId: string, reviewId: string): Promise<ReviewState | undefined> {
  const { rows } = await tx.query<{ state: ReviewState }>(
    `SELECT state FROM record_review WHERE tenant_id = $1 AND review_id = $2 FOR UPDATE`,
    [tenantId, reviewId]);
  return rows[0]?.state;
}

/** A version of a natural key to look up among those a person decided on. */
export interface VersionProbe { naturalKey: string; fingerprint: string; reviewId: string }

/** A version a person decided on (docs/decisions/0099), and what its repeat names. */
export interface DecidedVersion {
  natural_key: string; fingerprint: string; review_id: string;
  decision: "replace" | "apply_as_new" | "refuse" | "release";
  original_ref: string; operator: string | null; reason: string | null;
}

/**
 * The versions among `probes` that a person decided on: the held content of a review decided
 * apply-as-new, released or refused (its id derives from key and content), else a content a
 * replace set aside (record_superseded). One probe of each primary key per version (0052).
 */
export async function selectDecidedVersions(
  tx: Queryable, tenantId: string, probes: readonly VersionProbe[],
): Promise<DecidedVersion[]> {
  if (probes.length === 0) return [];
  const { rows } = await tx.query<DecidedVersion>({
    name: "clearline.records.decided_versions",
    text: `SELECT w.natural_key, w.fingerprint, v.review_id, v.decision, v.original_ref,
            v.operator, v.reason
       FROM unnest($2::text[], $3::text[], $4::text[]) AS w(natural_key, fingerprint, review_id)
      CROSS JOIN LATERAL (
        SELECT * FROM (
          SELECT 1 AS rank, r.review_id,
                 CASE r.state WHEN 'refused' THEN 'refuse' WHEN 'applied_as_new' THEN 'apply_as_new'
                   ELSE 'release' END AS decision,
                 CASE WHEN r.state = 'refused' THEN r.file_id || '#' || r.record_index
                   ELSE coalesce(r.transfer_key, 'review:' || r.review_id) END AS original_ref,
                 d.operator, coalesce(d.reason, r.decision_reason) AS reason
            FROM record_review r
            LEFT JOIN review_decision d ON d.tenant_id = r.tenant_id AND d.review_id = r.review_id
           WHERE r.tenant_id = $1 AND r.review_id = w.review_id
             AND r.state IN ('applied_as_new', 'released', 'refused')
          UNION ALL
          SELECT 2, s.review_id, d.decision, s.superseded_ref, d.operator, d.reason
            FROM record_superseded s
            JOIN review_decision d ON d.tenant_id = s.tenant_id AND d.review_id = s.review_id
           WHERE s.tenant_id = $1 AND s.natural_key = w.natural_key
             AND s.fingerprint = w.fingerprint
        ) u ORDER BY rank LIMIT 1) v`,
    values: [
      tenantId, probes.map((p) => p.naturalKey), probes.map((p) => p.fingerprint),
      probes.map((p) => p.reviewId),
    ],
  });
  return rows;
}

/** The content a replace set aside, with the posting it had: one row per (key, content). */
export interface SupersededWrite {
  naturalKey: string; fingerprint: string; reviewId: string; supersededRef: string;
}

export async function insertSuperseded(
  tx: Queryable, tenantId: string, superseded: SupersededWrite,
): Promise<void> {
  // A content set aside before keeps its first decision (a decision is never changed).
  await tx.query(
    `INSERT INTO record_superseded (tenant_id, natural_key, fingerprint, review_id,
       superseded_ref)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, natural_key, fingerprint) DO NOTHING`,
    [tenantId, superseded.naturalKey, superseded.fingerprint, superseded.reviewId,
      superseded.supersededRef]);
}

export interface DecisionRow {
  decision: "replace" | "apply_as_new" | "refuse"; state: ReviewState; reason: string; operator: string; decided_at: Date;
  original_transfer_key: string | null; compensation_key: string | null; posting_key: string | null;
}

export async function selectDecision(tx: Queryable, tenantId: string, reviewId: string): Promise<DecisionRow | undefined> {
  const { rows } = await tx.query<DecisionRow>(
    `SELECT d.decision, r.state, d.reason, d.operator, d.decided_at, d.original_transfer_key, d.compensation_key, d.posting_key
       FROM review_decision d JOIN record_review r ON r.tenant_id = d.tenant_id
         AND r.review_id = d.review_id
      WHERE d.tenant_id = $1 AND d.review_id = $2`, [tenantId, reviewId]);
  return rows[0];
}

export interface DecisionWrite {
  tenantId: string; reviewId: string; decision: DecisionRow["decision"]; reason: string; operator: string; state: ReviewState;
  originalTransferKey: string | null; compensationKey: string | null; postingKey: string | null;
}

/** The decision row (one per review: the primary key holds it once) and the item's new state; true when this call wrote it. */
export async function insertDecision(tx: Queryable, d: DecisionWrite): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO review_decision (tenant_id, review_id, decision, reason, operator, original_transfer_key, compensation_key, posting_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, review_id) DO NOTHING`,
    [d.tenantId, d.reviewId, d.decision, d.reason, d.operator, d.originalTransferKey, d.compensationKey, d.postingKey]);
  if (inserted.rowCount !== 1) return false;
  await tx.query(
    `UPDATE record_review SET state = $3, decision_reason = $4, decided_at = now(),
       transfer_key = $5 WHERE tenant_id = $1 AND review_id = $2`,
    [d.tenantId, d.reviewId, d.state, d.reason, d.postingKey]);
  return true;
}

export interface KeyMarkWrite {
  naturalKey: string; state: KeyState; transferKey: string | null;
  matchedKey?: string;
  content?: { fingerprint: string; amountMinor: string; currency: string; valueDate: string };
}

/** What a decision does to a dedup mark: its state and effect, and for a replace the content it now stands for. */
export async function markKeyDecided(tx: Queryable, tenantId: string, mark: KeyMarkWrite): Promise<void> {
  await tx.query(
    `UPDATE record_key SET state = $3, transfer_key = $4, fingerprint = coalesce($5, fingerprint),
       amount_minor = coalesce($6::bigint, amount_minor),
            currency = coalesce($7, currency), value_date = coalesce($8::date, value_date),
            matched_key = coalesce($9, matched_key)
      WHERE tenant_id = $1 AND natural_key = $2`,
    [tenantId, mark.naturalKey, mark.state, mark.transferKey, mark.content?.fingerprint ?? null, mark.content?.amountMinor ?? null,
      mark.content?.currency ?? null, mark.content?.valueDate ?? null, mark.matchedKey ?? null]);
}

/** A key's state, content and posting, and whether an applied return reversed it. */
export interface KeyMarkRow {
  state: KeyState; fingerprint: string; transfer_key: string | null; returned: boolean;
}

export async function selectKeyMark(
  tx: Queryable, tenantId: string, naturalKey: string,
): Promise<KeyMarkRow | undefined> {
  const { rows } = await tx.query<KeyMarkRow>(
    `SELECT k.state, k.fingerprint, k.transfer_key,
            EXISTS (SELECT 1 FROM record_key r WHERE r.tenant_id = k.tenant_id
              AND r.matched_key = k.natural_key AND r.state = 'applied') AS returned
       FROM record_key k WHERE k.tenant_id = $1 AND k.natural_key = $2`, [tenantId, naturalKey]);
  return rows[0];
}

export interface SuspensePostingRow { tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: bigint; currency: string; transfer_key: string; detail: string }

/** Records posted to a partner's suspense account because their counterparty matched no alias, newest first. */
export async function selectSuspensePostings(db: Queryable, tenantId: string | null, rowsMax: number): Promise<SuspensePostingRow[]> {
  const { rows } = await db.query<SuspensePostingRow>(
    `SELECT tenant_id, file_id, position, natural_key, amount_minor, currency, transfer_key, detail
       FROM record_outcome
      WHERE ($1::text IS NULL OR tenant_id = $1) AND outcome = 'applied'
        AND code = ANY($3::text[])
      ORDER BY created_at DESC LIMIT $2`,
    [tenantId, rowsMax, storedNamesOf("RECORD_COUNTERPARTY_UNRESOLVED")]);
  return rows;
}
