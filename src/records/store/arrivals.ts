/**
 * What a file arrival leaves: one outcome row per record (record_outcome) and review items
 * (record_review).
 */
import type { Queryable } from "../../db/pool.ts";
import { currentCode, storedNamesOf, type ErrorCode } from "../../errors/catalog.ts";
import type { RecordOutcome, ReviewReason } from "../record-states.ts";

const column = <T, R>(rows: readonly T[], pick: (row: T) => R): R[] => rows.map(pick);

export interface OutcomeRow {
  recordIndex: number; position: string; naturalKey: string | null; outcome: RecordOutcome;
  code: ErrorCode | null; field: string | null;
  detail: string | null; kind: string | null; amountMinor: bigint | null; currency: string | null; originalRef: string | null; transferKey: string | null;
}

/** One outcome row per record of a file chunk (a resumed chunk finds its rows and adds none). */
export async function insertOutcomes(tx: Queryable, tenantId: string, fileId: string, rows: readonly OutcomeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO record_outcome (tenant_id, file_id, record_index, position, natural_key, outcome,
       code, field, detail, kind, amount_minor, currency, original_ref, transfer_key)
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

/**
 * The outcome rows of records (fromIndex, fromIndex + records] of a file whose bytes equal those
 * of `sameBytesFileId`, each a duplicate of the same record of that file (docs/decisions/0055),
 * written in ONE statement from the stored rows: the earlier file's outcome row gives the record's
 * position, key, kind and amount, its dedup mark the original it names (as compareRepeats does:
 * the mark's posting, else `<file>#<record>`). A record is answered only where the earlier file
 * applied it itself and its mark still stands for that arrival: claimed by that file and record,
 * with the posting its outcome row names. A review replace gives a mark new content and always a
 * new posting (`<key>:replace:<review>`, or none), so an unchanged posting means an unchanged
 * fingerprint. A suspect's replace keeps the matched key's posting and marks it `replaced`: a
 * record still `applied` is answered, a replaced one is read (its repeat names the decision,
 * docs/decisions/0099). Returns the rows written; fewer than `records` means some record is not
 * answered here and the caller must roll back and read the records.
 */
export async function insertSameBytesRepeats(tx: Queryable, tenantId: string, fileId: string, sameBytesFileId: string, fromIndex: number, records: number): Promise<number> {
  const { rowCount } = await tx.query({
    name: "clearline.records.same-bytes-repeats",
    text: `INSERT INTO record_outcome (tenant_id, file_id, record_index, position, natural_key,
             outcome, code, kind, amount_minor, currency, original_ref)
           SELECT o.tenant_id, $2, o.record_index, o.position, o.natural_key, 'duplicate',
                  'RECORD_DUPLICATE', o.kind, o.amount_minor, o.currency,
                  coalesce(k.transfer_key, k.file_id || '#' || k.record_index)
             FROM record_outcome o
            CROSS JOIN LATERAL (
                  SELECT k.transfer_key, k.file_id, k.record_index FROM record_key k
                   WHERE k.tenant_id = o.tenant_id AND k.natural_key = o.natural_key
                     AND k.file_id = o.file_id AND k.record_index = o.record_index AND k.transfer_key IS NOT DISTINCT FROM o.transfer_key
                     AND k.state = 'applied'
                  OFFSET 0) k
            WHERE o.tenant_id = $1 AND o.file_id = $3 AND o.record_index > $4 AND o.record_index <= $4 + $5 AND o.outcome = 'applied'
           ON CONFLICT (tenant_id, file_id, record_index) DO NOTHING`,
    values: [tenantId, fileId, sameBytesFileId, fromIndex, records],
  });
  return rowCount ?? 0;
}

export interface ReviewWrite {
  reviewId: string; reason: ReviewReason; naturalKey: string; fingerprint: string;
  recordIndex: number; record: string; matchedRef: string | null;
}

/** Review items, one per (key, content): the same changed record uploaded twice is one item. */
export async function insertReviews(
  tx: Queryable, tenantId: string, fileId: string, partnerId: string, rows: readonly ReviewWrite[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO record_review (tenant_id, review_id, reason, natural_key, fingerprint, file_id,
       record_index, partner_id, record, matched_ref)
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


// ---------------------------------------------------------------------------------------------
// Reading a file's arrivals back (reports, previews, the correction a file makes).

export interface RejectedOutcomeRow { position: string; field: string | null; code: string; detail: string | null }

/** A file's rejected records, in file order. */
export async function rejectedRecordsOfFile(
  db: Queryable, tenantId: string, fileId: string, rowsMax: number,
): Promise<RejectedOutcomeRow[]> {
  const { rows } = await db.query<RejectedOutcomeRow>(
    `SELECT position, field, code, detail FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
       AND outcome = 'rejected'
      ORDER BY record_index LIMIT $3`, [tenantId, fileId, rowsMax]);
  return rows.map((row) => ({ ...row, code: currentCode(row.code) }));
}

export interface DroppedOutcomeRow { index: number; position: string; natural_key: string; kind: string | null; amount_minor: bigint; currency: string; transfer_key: string | null; total: bigint }

/**
 * What the original applied and the correction leaves out: neither its natural key nor its
 * content under another key (a suspect the correction holds against it) is in the correction.
 */
export async function recordsDroppedByCorrection(
  db: Queryable, tenantId: string, originalFileId: string, correctionFileId: string,
  rowsMax: number,
): Promise<DroppedOutcomeRow[]> {
  const { rows } = await db.query<DroppedOutcomeRow>(
    // NOT IN over the correction's keys is planned as one hashed set, whatever the statistics:
    // right after a large file, before autovacuum has analyzed it, correlated NOT EXISTS probes
    // were planned as a nested loop over every pair of records (20,000 x 20,000 passed the
    // statement timeout on a busy machine in the kill test).
    `SELECT o.record_index AS index, o.position, o.natural_key, o.kind, o.amount_minor, o.currency, o.transfer_key, count(*) OVER () AS total
       FROM record_outcome o
      WHERE o.tenant_id = $1 AND o.file_id = $2 AND o.outcome = 'applied' AND o.natural_key IS NOT NULL
        AND o.natural_key NOT IN (
              SELECT c.natural_key FROM record_outcome c WHERE c.tenant_id = $1 AND c.file_id = $3
                AND c.natural_key IS NOT NULL
              UNION ALL
              SELECT r.matched_ref FROM record_review r WHERE r.tenant_id = $1 AND r.file_id = $3
                AND r.matched_ref IS NOT NULL)
      ORDER BY o.record_index LIMIT $4`,
    [tenantId, originalFileId, correctionFileId, rowsMax]);
  return rows;
}

/**
 * Whether a file holds a record whose kind is not among `answerKinds` (a forward entry, not a
 * return or NOC): read along the outcome table's primary key, a forward file answers at its
 * first record. A rejected record, without a kind, counts for neither.
 */
export async function fileHoldsForwardRecord(
  db: Queryable, tenantId: string, fileId: string, answerKinds: readonly string[],
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM record_outcome
      WHERE tenant_id = $1 AND file_id = $2 AND kind <> ALL($3::text[]) LIMIT 1`,
    [tenantId, fileId, answerKinds]);
  return rows.length > 0;
}

export interface OutcomeReadRow {
  index: number; position: string; natural_key: string | null; outcome: RecordOutcome; code: string | null; field: string | null; detail: string | null;
  kind: string | null; amount_minor: bigint | null; currency: string | null; original_ref: string | null; transfer_key: string | null;
}

/** Per-record outcomes of a file, in file order. */
export async function outcomesOfFile(
  db: Queryable, tenantId: string, fileId: string, rowsMax: number,
): Promise<OutcomeReadRow[]> {
  const { rows } = await db.query<OutcomeReadRow>(
    `SELECT record_index AS index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key
       FROM record_outcome WHERE tenant_id = $1 AND file_id = $2 ORDER BY record_index LIMIT $3`,
    [tenantId, fileId, rowsMax]);
  // A row written before a code was renamed reads as the code's name now (docs/decisions/0068).
  return rows.map((row) => (row.code === null ? row : { ...row, code: currentCode(row.code) }));
}

export interface AppliedOutcomeRow { index: number; position: string; natural_key: string; kind: string | null; amount_minor: bigint; currency: string; transfer_key: string | null; fingerprint: string | null }

/** A page of a file's applied records (after `afterIndex`), with the content their keys stand for now. */
export async function appliedRecordsOfFilePage(
  db: Queryable, tenantId: string, fileId: string, afterIndex: number, rowsMax: number,
): Promise<AppliedOutcomeRow[]> {
  const { rows } = await db.query<AppliedOutcomeRow>(
    `SELECT o.record_index AS index, o.position, o.natural_key, o.kind, o.amount_minor, o.currency, o.transfer_key, k.fingerprint
       FROM record_outcome o LEFT JOIN record_key k ON k.tenant_id = o.tenant_id
         AND k.natural_key = o.natural_key
      WHERE o.tenant_id = $1 AND o.file_id = $2 AND o.outcome = 'applied' AND o.natural_key IS NOT NULL AND o.record_index > $3
      ORDER BY o.record_index LIMIT $4`, [tenantId, fileId, afterIndex, rowsMax]);
  return rows;
}

/** The record posted under `transferKey` to the partner's suspense account because its counterparty matched no alias. */
export async function unresolvedCounterpartyPosting(
  db: Queryable, tenantId: string, transferKey: string,
): Promise<{ amount_minor: string; currency: string } | undefined> {
  const { rows } = await db.query<{ amount_minor: string; currency: string }>(
    `SELECT amount_minor::text, currency
       FROM record_outcome
      WHERE tenant_id = $1 AND transfer_key = $2 AND outcome = 'applied' AND code = ANY($3::text[])
      LIMIT 1`,
    [tenantId, transferKey, storedNamesOf("RECORD_COUNTERPARTY_UNRESOLVED")]);
  return rows[0];
}

/** A file's record as the console's file page lists it, with its review and its original. */
export interface FileRecordRow {
  index: number; position: string; natural_key: string | null; outcome: RecordOutcome;
  code: string | null; detail: string | null; kind: string | null; amount_minor: string | null;
  currency: string | null; original_ref: string | null; transfer_key: string | null;
  review_id: string | null; review_state: string | null;
  original_key: string | null; original_file_id: string | null; original_position: string | null;
}

/**
 * A page of a file's records after `afterIndex` (a cursor on the record's place in the file, not
 * an offset), optionally of one outcome. A held record names its review item (the one of this
 * arrival, else the latest of its key: one item per key and content, so a second upload of the
 * same change shares the first's). The original is the arrival that first claimed the key the
 * record repeats or conflicts with (a suspect: the key whose content it repeats), when that is
 * another arrival.
 */
export async function fileRecordsPage(
  db: Queryable, tenantId: string, fileId: string,
  page: { afterIndex: number; outcome: RecordOutcome | null; rowsMax: number },
): Promise<FileRecordRow[]> {
  const { rows } = await db.query<FileRecordRow>(
    `SELECT o.record_index AS index, o.position, o.natural_key, o.outcome, o.code, o.detail,
            o.kind, o.amount_minor::text AS amount_minor, o.currency, o.original_ref,
            o.transfer_key, r.review_id, r.state AS review_state,
            k.natural_key AS original_key, k.file_id AS original_file_id,
            k.position AS original_position
       FROM record_outcome o
       LEFT JOIN LATERAL (
             SELECT r.review_id, r.state, r.matched_ref FROM record_review r
              WHERE o.outcome IN ('conflict', 'suspect') AND r.tenant_id = o.tenant_id
                AND r.natural_key = o.natural_key
              ORDER BY (r.file_id = o.file_id AND r.record_index = o.record_index) DESC,
                       r.created_at DESC
              LIMIT 1) r ON true
       LEFT JOIN record_key k ON k.tenant_id = o.tenant_id
        AND k.natural_key = CASE WHEN o.outcome = 'suspect' THEN r.matched_ref
                                 ELSE o.natural_key END
        AND (k.file_id <> o.file_id OR k.record_index <> o.record_index)
      WHERE o.tenant_id = $1 AND o.file_id = $2 AND o.record_index > $3
        AND ($4::text IS NULL OR o.outcome = $4)
      ORDER BY o.record_index
      LIMIT $5`,
    [tenantId, fileId, page.afterIndex, page.outcome, page.rowsMax]);
  return rows.map((row) => (row.code === null ? row : { ...row, code: currentCode(row.code) }));
}
