/** What a file arrival leaves: one outcome row per record (ingest_outcome) and review items (ingest_review). */
import type { Queryable } from "../../db/pool.ts";
import type { RecordOutcome } from "../record-states.ts";

const column = <T, R>(rows: readonly T[], pick: (row: T) => R): R[] => rows.map(pick);

export interface OutcomeRow {
  recordIndex: number; position: string; naturalKey: string | null; outcome: RecordOutcome; code: string | null; field: string | null;
  detail: string | null; kind: string | null; amountMinor: bigint | null; currency: string | null; originalRef: string | null; transferKey: string | null;
}

/** One outcome row per record of a file chunk (a resumed chunk finds its rows and adds none). */
export async function insertOutcomes(tx: Queryable, tenantId: string, fileId: string, rows: readonly OutcomeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ingest_outcome (tenant_id, file_id, record_index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key)
     SELECT $1, $2, o.record_index, o.position, o.natural_key, o.outcome, o.code, o.field, o.detail, o.kind, o.amount_minor, o.currency, o.original_ref, o.transfer_key
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[])
            AS o(record_index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key)
     ON CONFLICT (tenant_id, file_id, record_index) DO NOTHING`,
    [
      tenantId, fileId, column(rows, (r) => r.recordIndex), column(rows, (r) => r.position), column(rows, (r) => r.naturalKey),
      column(rows, (r) => r.outcome), column(rows, (r) => r.code), column(rows, (r) => r.field), column(rows, (r) => r.detail), column(rows, (r) => r.kind),
      column(rows, (r) => r.amountMinor?.toString() ?? null), column(rows, (r) => r.currency), column(rows, (r) => r.originalRef), column(rows, (r) => r.transferKey),
    ],
  );
}

export interface ReviewRow { reviewId: string; reason: "conflict" | "suspect"; naturalKey: string; fingerprint: string; recordIndex: number; record: string; matchedRef: string | null }

/** Review items, one per (key, content): the same changed record uploaded twice is one item. */
export async function insertReviews(tx: Queryable, tenantId: string, fileId: string, partnerId: string, rows: readonly ReviewRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ingest_review (tenant_id, review_id, reason, natural_key, fingerprint, file_id, record_index, partner_id, record, matched_ref)
     SELECT $1, r.review_id, r.reason, r.natural_key, r.fingerprint, $2, r.record_index, $3, r.record::jsonb, r.matched_ref
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[])
            AS r(review_id, reason, natural_key, fingerprint, record_index, record, matched_ref)
     ON CONFLICT (tenant_id, review_id) DO NOTHING`,
    [
      tenantId, fileId, partnerId, column(rows, (r) => r.reviewId), column(rows, (r) => r.reason), column(rows, (r) => r.naturalKey),
      column(rows, (r) => r.fingerprint), column(rows, (r) => r.recordIndex), column(rows, (r) => r.record), column(rows, (r) => r.matchedRef),
    ],
  );
}

