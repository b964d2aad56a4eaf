import type { Queryable } from "../db/pool.ts";
import type { KeyState, RecordOutcome } from "./record-states.ts";

/**
 * The SQL of the record tables as the decision stages use them: dedup marks (ingest_record_key),
 * payment identities (record_identity), file arrivals (ingest_outcome) and review items
 * (ingest_review). Every write is set-based (one statement per stage and chunk, unnest arrays).
 */

export interface KeyRow {
  naturalKey: string; fingerprint: string; channel: string; kind: string; state: KeyState;
  recordIndex: number | null; position: string; amountMinor: bigint; currency: string; valueDate: string;
  transferKey: string | null; linkId1: string | null; linkId2: string | null;
  originalRef: string | null; originalId1: string | null; originalId2: string | null; identityKey: string | null;
}

const column = <T, R>(rows: readonly T[], pick: (row: T) => R): R[] => rows.map(pick);

/** Inserts the marks; the unique index says which are new (ON CONFLICT DO NOTHING, RETURNING). */
export async function insertKeys(tx: Queryable, tenantId: string, fileId: string | null, rows: readonly KeyRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: inserted } = await tx.query<{ natural_key: string }>(
    `INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id, record_index, position,
                                    amount_minor, currency, value_date, transfer_key, link_id1, link_id2, original_ref, original_id1, original_id2, identity_key)
     SELECT $1, k.natural_key, k.fingerprint, k.channel, k.kind, k.state, $2, k.record_index, k.position,
            k.amount_minor, k.currency, k.value_date::date, k.transfer_key, k.link_id1, k.link_id2, k.original_ref, k.original_id1, k.original_id2, k.identity_key
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::bigint[], $11::text[], $12::text[],
                   $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[])
            AS k(natural_key, fingerprint, channel, kind, state, record_index, position, amount_minor, currency, value_date,
                 transfer_key, link_id1, link_id2, original_ref, original_id1, original_id2, identity_key)
     ON CONFLICT (tenant_id, natural_key) DO NOTHING
     RETURNING natural_key`,
    [
      tenantId, fileId,
      column(rows, (r) => r.naturalKey), column(rows, (r) => r.fingerprint), column(rows, (r) => r.channel), column(rows, (r) => r.kind),
      column(rows, (r) => r.state), column(rows, (r) => r.recordIndex), column(rows, (r) => r.position), column(rows, (r) => r.amountMinor.toString()),
      column(rows, (r) => r.currency), column(rows, (r) => r.valueDate), column(rows, (r) => r.transferKey),
      column(rows, (r) => r.linkId1), column(rows, (r) => r.linkId2), column(rows, (r) => r.originalRef),
      column(rows, (r) => r.originalId1), column(rows, (r) => r.originalId2), column(rows, (r) => r.identityKey),
    ],
  );
  return new Set(inserted.map((r) => r.natural_key));
}

export interface StoredKey {
  natural_key: string; fingerprint: string; transfer_key: string | null; state: KeyState; amount_minor: bigint;
  file_id: string | null; record_index: number | null; position: string; original_name: string | null; identity_key: string | null;
}

/** The first arrival of keys seen before, with the name of the file it came in (when it did). */
export async function selectKeys(tx: Queryable, tenantId: string, naturalKeys: readonly string[]): Promise<Map<string, StoredKey>> {
  const { rows } = await tx.query<StoredKey>(
    `SELECT k.natural_key, k.fingerprint, k.transfer_key, k.state, k.amount_minor, k.file_id, k.record_index, k.position, f.original_name, f.identity_key
       FROM ingest_record_key k LEFT JOIN ingest_file f ON f.tenant_id = k.tenant_id AND f.file_id = k.file_id
      WHERE k.tenant_id = $1 AND k.natural_key = ANY($2::text[])`,
    [tenantId, [...new Set(naturalKeys)]],
  );
  return new Map(rows.map((r) => [r.natural_key, r]));
}

/** Review items a person decided by posting the changed record as a payment of its own. */
export async function selectPostedReviews(tx: Queryable, tenantId: string, reviewIds: readonly string[]): Promise<Map<string, string | null>> {
  const { rows } = await tx.query<{ review_id: string; transfer_key: string | null }>(
    "SELECT review_id, transfer_key FROM ingest_review WHERE tenant_id = $1 AND review_id = ANY($2::text[]) AND state IN ('applied_as_new', 'released')",
    [tenantId, reviewIds]);
  return new Map(rows.map((r) => [r.review_id, r.transfer_key]));
}

export interface UetrRow { natural_key: string; link_id1: string; link_id2: string | null; amount_minor: bigint; currency: string; transfer_key: string | null }

/** Applied records carrying these UETRs under other keys, oldest first. */
export async function selectAppliedByUetr(tx: Queryable, tenantId: string, uetrs: readonly string[], kinds: readonly string[], exceptKeys: readonly string[]): Promise<UetrRow[]> {
  const { rows } = await tx.query<UetrRow>(
    `SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key FROM ingest_record_key
      WHERE tenant_id = $1 AND link_id1 = ANY($2::text[]) AND kind = ANY($3::text[]) AND state = 'applied' AND NOT natural_key = ANY($4::text[])
      ORDER BY created_at, natural_key`,
    [tenantId, [...new Set(uetrs)], kinds, exceptKeys],
  );
  return rows;
}

/** The first applied record (not from `fileId`) with each of these fingerprints, inside the window. */
export async function selectRecentlyApplied(tx: Queryable, tenantId: string, fingerprints: readonly string[], fileId: string | null, windowHours: number): Promise<Map<string, { natural_key: string; transfer_key: string | null }>> {
  const { rows } = await tx.query<{ fingerprint: string; natural_key: string; transfer_key: string | null }>(
    `SELECT DISTINCT ON (fingerprint) fingerprint, natural_key, transfer_key FROM ingest_record_key
      WHERE tenant_id = $1 AND fingerprint = ANY($2::text[]) AND file_id IS DISTINCT FROM $3 AND state = 'applied'
        AND created_at > now() - make_interval(hours => $4)
      ORDER BY fingerprint, created_at`,
    [tenantId, fingerprints, fileId, windowHours],
  );
  return new Map(rows.map((r) => [r.fingerprint, r]));
}

export interface KeyStateChange { naturalKey: string; state: KeyState; transferKey: string | null; matchedKey: string | null }

export async function updateKeyStates(tx: Queryable, tenantId: string, states: readonly KeyStateChange[]): Promise<void> {
  if (states.length === 0) return;
  await tx.query(
    `UPDATE ingest_record_key k SET state = s.state, transfer_key = s.transfer_key, matched_key = s.matched_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS s(natural_key, state, transfer_key, matched_key)
      WHERE k.tenant_id = $1 AND k.natural_key = s.natural_key`,
    [tenantId, column(states, (s) => s.naturalKey), column(states, (s) => s.state), column(states, (s) => s.transferKey), column(states, (s) => s.matchedKey)],
  );
}

export interface OriginalRow { natural_key: string; link_id1: string | null; link_id2: string | null; amount_minor: bigint; currency: string; transfer_key: string; channel: string }

/** Posted records a return may name: by natural key or link id, else by the fallback ids. */
export async function selectOriginals(tx: Queryable, tenantId: string, refs: readonly string[], ids: readonly string[]): Promise<OriginalRow[]> {
  const { rows } = await tx.query<OriginalRow>(
    `SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key, channel FROM ingest_record_key
      WHERE tenant_id = $1 AND state = 'applied' AND transfer_key IS NOT NULL AND kind NOT IN ('return')
        AND (natural_key = ANY($2::text[]) OR link_id1 = ANY($2::text[]) OR link_id1 = ANY($3::text[]) OR link_id2 = ANY($3::text[]))`,
    [tenantId, refs, ids],
  );
  return rows;
}

/** Originals an applied return already reversed. */
export async function selectReversedOriginals(tx: Queryable, tenantId: string, originals: readonly string[]): Promise<Set<string>> {
  if (originals.length === 0) return new Set();
  const { rows } = await tx.query<{ matched_key: string }>(
    "SELECT matched_key FROM ingest_record_key WHERE tenant_id = $1 AND matched_key = ANY($2::text[]) AND state = 'applied'", [tenantId, originals]);
  return new Set(rows.map((r) => r.matched_key));
}

/** Whether any return waits for its original: one probe of a small partial index. */
export async function hasOrphans(tx: Queryable, tenantId: string): Promise<boolean> {
  const { rows } = await tx.query<{ waiting: boolean }>("SELECT EXISTS (SELECT 1 FROM ingest_record_key WHERE tenant_id = $1 AND state = 'orphan') AS waiting", [tenantId]);
  return rows[0]?.waiting === true;
}

export interface OrphanRow {
  natural_key: string; fingerprint: string; channel: string; kind: string; file_id: string; record_index: number; position: string;
  amount_minor: bigint; currency: string; value_date: string; original_ref: string | null; original_id1: string | null; original_id2: string | null;
}

/** Returns waiting for an original that names one of `refs` or carries one of `ids`. */
export async function selectWaitingOrphans(tx: Queryable, tenantId: string, refs: readonly string[], ids: readonly string[]): Promise<OrphanRow[]> {
  const { rows } = await tx.query<OrphanRow>(
    `SELECT natural_key, fingerprint, channel, kind, file_id, record_index, position, amount_minor, currency,
            to_char(value_date, 'YYYY-MM-DD') AS value_date, original_ref, original_id1, original_id2
       FROM ingest_record_key
      WHERE tenant_id = $1 AND state = 'orphan'
        AND (original_ref = ANY($2::text[]) OR original_id1 = ANY($3::text[]) OR original_id2 = ANY($3::text[]))`,
    [tenantId, refs, ids],
  );
  return rows;
}

/** An orphan's outcome row tells that its original arrived and the reversal was posted. */
export async function noteOrphanMatched(tx: Queryable, tenantId: string, orphan: Pick<OrphanRow, "file_id" | "record_index">, detail: string): Promise<void> {
  await tx.query("UPDATE ingest_outcome SET detail = $4 WHERE tenant_id = $1 AND file_id = $2 AND record_index = $3", [tenantId, orphan.file_id, orphan.record_index, detail]);
}

export interface IdentityRow { identityKey: string; naturalKey: string; channel: string; fingerprint: string; transferKey: string | null }

/** Claims payment identities; returns those this statement inserted (the first claim wins). */
export async function claimIdentities(tx: Queryable, tenantId: string, rows: readonly IdentityRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: inserted } = await tx.query<{ identity_key: string }>(
    `INSERT INTO record_identity (tenant_id, identity_key, natural_key, channel, fingerprint, transfer_key)
     SELECT $1, i.identity_key, i.natural_key, i.channel, i.fingerprint, i.transfer_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS i(identity_key, natural_key, channel, fingerprint, transfer_key)
     ON CONFLICT (tenant_id, identity_key) DO NOTHING
     RETURNING identity_key`,
    [tenantId, column(rows, (r) => r.identityKey), column(rows, (r) => r.naturalKey), column(rows, (r) => r.channel), column(rows, (r) => r.fingerprint), column(rows, (r) => r.transferKey)],
  );
  return new Set(inserted.map((r) => r.identity_key));
}

/** The first record of each identity, with where its key stands now (a first arrival that was not applied links nothing). */
export async function selectIdentities(tx: Queryable, tenantId: string, identityKeys: readonly string[]): Promise<Map<string, IdentityRow & { state: KeyState; position: string }>> {
  const { rows } = await tx.query<{ identity_key: string; natural_key: string; channel: string; fingerprint: string; transfer_key: string | null; state: KeyState; position: string }>(
    `SELECT i.identity_key, i.natural_key, i.channel, i.fingerprint, k.transfer_key, k.state, k.position
       FROM record_identity i JOIN ingest_record_key k ON k.tenant_id = i.tenant_id AND k.natural_key = i.natural_key
      WHERE i.tenant_id = $1 AND i.identity_key = ANY($2::text[])`,
    [tenantId, [...new Set(identityKeys)]],
  );
  return new Map(rows.map((r) => [r.identity_key, {
    identityKey: r.identity_key, naturalKey: r.natural_key, channel: r.channel, fingerprint: r.fingerprint, transferKey: r.transfer_key, state: r.state, position: r.position,
  }]));
}

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

// ---------------------------------------------------------------------------------------------
// A record's history (clearline record show, GET /v1/records/{key}): read-only.

export interface HistoryKeyRow {
  natural_key: string; channel: string; kind: string; state: KeyState; fingerprint: string; file_id: string | null; record_index: number | null;
  position: string; amount_minor: bigint; currency: string; transfer_key: string | null; matched_key: string | null; identity_key: string | null; created_at: string;
}

const AT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The key asked for (or the records carrying it as their payment identity), and every record sharing its identity. */
export async function selectHistoryKeys(db: Queryable, tenantId: string, key: string): Promise<HistoryKeyRow[]> {
  const { rows } = await db.query<HistoryKeyRow>(
    `WITH asked AS (
       SELECT natural_key, identity_key FROM ingest_record_key WHERE tenant_id = $1 AND (natural_key = $2 OR identity_key = $2)
     )
     SELECT k.natural_key, k.channel, k.kind, k.state, k.fingerprint, k.file_id, k.record_index, k.position, k.amount_minor, k.currency,
            k.transfer_key, k.matched_key, k.identity_key, ${AT("k.created_at")} AS created_at
       FROM ingest_record_key k
      WHERE k.tenant_id = $1
        AND (k.natural_key IN (SELECT natural_key FROM asked)
             OR k.identity_key IN (SELECT identity_key FROM asked WHERE identity_key IS NOT NULL))
      ORDER BY k.created_at, k.natural_key`,
    [tenantId, key],
  );
  return rows;
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
       FROM ingest_outcome o JOIN ingest_file f ON f.tenant_id = o.tenant_id AND f.file_id = o.file_id
      WHERE o.tenant_id = $1 AND o.natural_key = ANY($2::text[])
      ORDER BY o.created_at, o.file_id, o.record_index`,
    [tenantId, naturalKeys],
  );
  return rows;
}

export interface HistoryRepeatRow { dedup_key: string; channel: string; scope: string; reason: string; original_ref: string | null; position: string | null; at: string }

/** Later arrivals by request or message (an HTTP repeat, a card retransmission): their dedup records. File lines are outcome rows. */
export async function selectRequestRepeats(db: Queryable, tenantId: string, naturalKeys: readonly string[]): Promise<HistoryRepeatRow[]> {
  const { rows } = await db.query<HistoryRepeatRow>(
    `SELECT dedup_key, channel, scope, reason, original_ref, position, ${AT("created_at")} AS at
       FROM dedup_event
      WHERE tenant_id = $1 AND dedup_key = ANY($2::text[]) AND channel IN ('http', 'iso8583')
      ORDER BY created_at`,
    [tenantId, naturalKeys],
  );
  return rows;
}

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
       FROM ingest_review r LEFT JOIN review_decision d ON d.tenant_id = r.tenant_id AND d.review_id = r.review_id
      WHERE r.tenant_id = $1 AND r.natural_key = ANY($2::text[])
      ORDER BY r.created_at, r.review_id`,
    [tenantId, naturalKeys],
  );
  return rows;
}

/** The tenants that hold a natural key (or payment identity): a command given no tenant needs exactly one. */
export async function tenantsHoldingKey(db: Queryable, key: string): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    "SELECT DISTINCT tenant_id FROM ingest_record_key WHERE natural_key = $1 OR identity_key = $1 ORDER BY tenant_id LIMIT 2", [key]);
  return rows.map((r) => r.tenant_id);
}
