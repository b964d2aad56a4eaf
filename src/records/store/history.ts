/** A record's history (clearline record show, GET /v1/records/{key}): read-only. */
import type { Queryable } from "../../db/pool.ts";
import { currentCode } from "../../errors/catalog.ts";
import { storedChannel, type Channel } from "../../normalize/canonical-record.ts";
import type { KeyState, RecordOutcome } from "../record-states.ts";


export interface HistoryKeyRow {
  natural_key: string; channel: Channel; kind: string; state: KeyState; fingerprint: string;
  file_id: string | null; record_index: number | null;
  position: string; amount_minor: bigint; currency: string; transfer_key: string | null; original_ref: string | null; matched_key: string | null;
  identity_key: string | null; created_at: string;
}

const AT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The key asked for (or the records carrying it as their payment identity), every record sharing
 * its identity, and the records linked to those (a return or reversal matched with its original,
 * and the later reversals matched with that one).
 */
export async function selectHistoryKeys(db: Queryable, tenantId: string, key: string): Promise<HistoryKeyRow[]> {
  const { rows } = await db.query<Omit<HistoryKeyRow, "channel"> & { channel: string }>(
    `WITH asked AS (
       SELECT natural_key, identity_key FROM record_key
        WHERE tenant_id = $1 AND (natural_key = $2 OR identity_key = $2)
     ), linked AS (
       SELECT natural_key FROM record_key WHERE tenant_id = $1
         AND matched_key IN (SELECT natural_key FROM asked)
     )
     SELECT k.natural_key, k.channel, k.kind, k.state, k.fingerprint, k.file_id, k.record_index, k.position, k.amount_minor, k.currency,
            k.transfer_key, k.original_ref, k.matched_key, k.identity_key, ${AT("k.created_at")} AS created_at
       FROM record_key k
      WHERE k.tenant_id = $1
        AND (k.natural_key IN (SELECT natural_key FROM asked)
             OR k.identity_key IN (SELECT identity_key FROM asked WHERE identity_key IS NOT NULL)
             -- the records that undid part of an asked one (a payment's refunds, a file original's return, a card reversal),
             -- and the later reversals decided against such a one (decision 0039)
             OR k.natural_key IN (SELECT natural_key FROM linked)
             OR k.matched_key IN (SELECT natural_key FROM linked))
      ORDER BY k.created_at, k.natural_key`,
    [tenantId, key],
  );
  return rows.map((row) => ({ ...row, channel: storedChannel(row.channel) }));
}

export interface HistoryFileArrivalRow {
  natural_key: string; file_id: string; file_name: string; record_index: number; position: string; outcome: RecordOutcome;
  code: string | null; detail: string | null; transfer_key: string | null; original_ref: string | null; at: string;
}

/** Every line of every file that carried one of these keys. */
export async function selectFileArrivals(db: Queryable, tenantId: string, naturalKeys: readonly string[]): Promise<HistoryFileArrivalRow[]> {
  const { rows } = await db.query<HistoryFileArrivalRow>(
    `SELECT o.natural_key, o.file_id, f.original_name AS file_name, o.record_index, o.position, o.outcome, o.code, o.detail, o.transfer_key, o.original_ref,
            ${AT("o.created_at")} AS at
       FROM record_outcome o JOIN received_file f ON f.tenant_id = o.tenant_id
         AND f.file_id = o.file_id
      WHERE o.tenant_id = $1 AND o.natural_key = ANY($2::text[])
      ORDER BY o.created_at, o.file_id, o.record_index`,
    [tenantId, naturalKeys],
  );
  // A row written before a code was renamed reads as the code's name now (docs/decisions/0068).
  return rows.map((row) => (row.code === null ? row : { ...row, code: currentCode(row.code) }));
}

export interface HistoryRepeatRow { dedup_key: string; channel: string; scope: string; reason: string; original_ref: string | null; position: string | null; at: string }

export interface HistoryReviewRow {
  review_id: string; natural_key: string; reason: string; state: string; file_id: string; record_index: number; created_at: string;
  decision: string | null; decision_reason: string | null; operator: string | null; decided_at: string | null;
  posting_key: string | null; compensation_key: string | null;
}

/** Review items of these keys and the decision on each. */
export async function selectHistoryReviews(db: Queryable, tenantId: string, naturalKeys: readonly string[]): Promise<HistoryReviewRow[]> {
  const { rows } = await db.query<HistoryReviewRow>(
    `SELECT r.review_id, r.natural_key, r.reason, r.state, r.file_id, r.record_index, ${AT("r.created_at")} AS created_at,
            d.decision, d.reason AS decision_reason, d.operator, ${AT("d.decided_at")} AS decided_at, d.posting_key, d.compensation_key
       FROM record_review r LEFT JOIN review_decision d ON d.tenant_id = r.tenant_id
         AND d.review_id = r.review_id
      WHERE r.tenant_id = $1 AND r.natural_key = ANY($2::text[])
      ORDER BY r.created_at, r.review_id`,
    [tenantId, naturalKeys],
  );
  return rows;
}

/** The tenants that hold a natural key (or payment identity): a command given no tenant needs exactly one. */
export async function tenantsHoldingKey(db: Queryable, key: string): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    `SELECT DISTINCT tenant_id FROM record_key WHERE natural_key = $1 OR identity_key = $1
       ORDER BY tenant_id LIMIT 2`, [key]);
  return rows.map((r) => r.tenant_id);
}

