import { assert } from "../assert.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { sqlState, withTransaction, type Tx } from "../db/transaction.ts";
import { de, storableFields, textField, type FieldValue, type Message } from "../protocols/iso8583/index.ts";
import type { SettledRecordsReader, TotalsCategory } from "../recon/scheme-totals.ts";

/**
 * The issuer side's response store (iso8583_inbound): one row per original answered, its
 * decision and its response without card data, written in the transaction that made the effect.
 * It is the channel's own contract, like the HTTP idempotency record: a repeat is answered from
 * here. Whether a key was seen, and with what content, is the record core's (record_key).
 * Every original runs these statements, so each is named: prepared once per connection, not
 * parsed and planned per message.
 */

/**
 * Serializes everything that concerns one original: its repeats, its reversal. The lock of a batch
 * of one, so that a reversal and a batch of originals can never compute the lock id differently.
 */
export async function lockOriginal(tx: Tx, tenantId: string, originalKey: string): Promise<void> {
  await lockOriginals(tx, tenantId, [originalKey]);
}

/**
 * The locks of a batch of originals of one tenant, in one statement, taken in the order of their
 * lock ids: two batches (or a batch and a lone message) never wait on each other's locks in a cycle.
 */
export async function lockOriginals(tx: Tx, tenantId: string, originalKeys: readonly string[]): Promise<void> {
  await tx.query({
    name: "iso8583_lock_originals",
    text: `SELECT pg_advisory_xact_lock(hashtext($1), s.key_hash)
             FROM (SELECT DISTINCT hashtext(k) AS key_hash FROM unnest($2::text[]) AS k ORDER BY 1) AS s`,
    values: [tenantId, originalKeys],
  });
}

/** A unique-index race on the RRN between two different keys: the transaction is run again and sees the winner. */
export async function inTransaction<T>(pool: Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, work);
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    return withTransaction(pool, work);
  }
}

/** Where a message came from, for dedup_event.position and the record's position: identifiers only. */
export function messagePositionOf(message: Message): string {
  const stan = textField(message, de.systemTraceAuditNumber) ?? "";
  return `mti=${message.mti} stan=${stan} rrn=${textField(message, de.retrievalReferenceNumber) ?? ""}`;
}

export interface StoredCardResponse {
  natural_key: string;
  fingerprint: string;
  outcome: string;
  response_mti: string;
  response_fields: Record<string, FieldValue>;
  effect_key: string | null;
}

export interface SeenOriginal {
  // The row of this key, else of this RRN in the message class (the second link).
  stored?: StoredCardResponse;
  reversalKey?: string;             // a reversal of this key that arrived first
}

/** One original of a batch, as `selectSeenOriginals` looks it up. */
export interface OriginalLookup {
  naturalKey: string;
  mtiClass: string;
  rrn: string | undefined;
}

/**
 * What was answered under each key (else its RRN) and whether its reversal came first: one read
 * for a batch of originals of one tenant, after their locks, in the order given. Each arm is an
 * equality on a whole unique index, so the plan stays an index lookup per original even when the
 * statement's prepared plan is the generic one.
 */
export async function selectSeenOriginals(db: Queryable, tenantId: string, originals: readonly OriginalLookup[]): Promise<SeenOriginal[]> {
  type Row = Partial<StoredCardResponse> & { ord: string; reversal_key: string | null };
  const { rows } = await db.query<Row>({
    name: "iso8583_inbound_seen_batch",
    text: `SELECT q.ord::text AS ord, s.natural_key, s.fingerprint, s.outcome, s.response_mti, s.response_fields, s.effect_key,
            (SELECT r.natural_key FROM iso8583_inbound_reversal r WHERE r.tenant_id = $1 AND r.original_key = q.natural_key) AS reversal_key
       FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS q(natural_key, mti_class, rrn, ord)
       LEFT JOIN LATERAL (
         SELECT natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM (
           SELECT 1 AS link, natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM iso8583_inbound
            WHERE tenant_id = $1 AND natural_key = q.natural_key
           UNION ALL
           SELECT 2, natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM iso8583_inbound
            WHERE tenant_id = $1 AND mti_class = q.mti_class AND retrieval_reference_number = q.rrn
         ) AS linked ORDER BY link LIMIT 1) AS s ON true
      ORDER BY q.ord`,
    values: [tenantId, originals.map((o) => o.naturalKey), originals.map((o) => o.mtiClass), originals.map((o) => o.rrn ?? null)],
  });
  assert(rows.length === originals.length, "one seen row per original looked up");
  return rows.map((row) => {
    const seen: SeenOriginal = {};
    if (row.natural_key != null) seen.stored = row as StoredCardResponse;
    if (row.reversal_key != null) seen.reversalKey = row.reversal_key;
    return seen;
  });
}

export interface InboundRow {
  tenantId: string;
  naturalKey: string;
  mtiClass: string;
  rrn: string | undefined;
  mti: string;
  fingerprint: string;
  cardHash: string;
  accountId: string | null;
  amountMinor: bigint;
  currency: string;
  outcome: "held" | "posted" | "posted_to_suspense" | "declined" | "refused_after_reversal" | "approved" | "answered";
  response: Message;
  effectKey: string | null;
  connection: string;
}

/** Stores the answers to originals (without card data) in the transaction of their decisions: one statement for a batch. */
export async function insertInbounds(tx: Tx, rows: readonly InboundRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (row: InboundRow) => T): T[] => rows.map(pick);
  await tx.query({
    name: "iso8583_inbound_insert_batch",
    text: `INSERT INTO iso8583_inbound (tenant_id, natural_key, mti_class, retrieval_reference_number, mti, fingerprint, card_hash, account_id,
       amount_minor, currency, outcome, response_code, response_mti, response_fields, effect_key, connection)
     SELECT r.tenant_id, r.natural_key, r.mti_class, r.rrn, r.mti, r.fingerprint, r.card_hash, r.account_id,
            r.amount_minor, r.currency, r.outcome, r.response_code, r.response_mti, r.response_fields::jsonb, r.effect_key, r.connection
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
            AS r(tenant_id, natural_key, mti_class, rrn, mti, fingerprint, card_hash, account_id,
                 amount_minor, currency, outcome, response_code, response_mti, response_fields, effect_key, connection)`,
    values: [column((r) => r.tenantId), column((r) => r.naturalKey), column((r) => r.mtiClass), column((r) => r.rrn ?? null), column((r) => r.mti),
      column((r) => r.fingerprint), column((r) => r.cardHash), column((r) => r.accountId), column((r) => r.amountMinor.toString()), column((r) => r.currency),
      column((r) => r.outcome), column((r) => String(r.response.fields[de.responseCode])), column((r) => r.response.mti), column((r) => JSON.stringify(storableFields(r.response))),
      column((r) => r.effectKey), column((r) => r.connection)],
  });
}

export interface SeenReversal {
  // The first reversal's answer (iso8583_inbound_reversal: one per original).
  stored?: StoredCardResponse;
  original?: { amountMinor: bigint; currency: string };   // the original as answered, when it was and with a currency
}

/** The answer stored for a reversal of this original, and the original as answered: one read, after the original's lock. */
export async function selectReversalSeen(db: Queryable, tenantId: string, originalKey: string): Promise<SeenReversal> {
  type Row = Partial<StoredCardResponse>
    & { original_amount: string | null; original_currency: string | null };
  const { rows } = await db.query<Row>({
    name: "iso8583_inbound_reversal_seen",
    text: `SELECT r.natural_key, r.fingerprint, r.outcome, r.response_mti, r.response_fields, r.effect_key,
            o.amount_minor::text AS original_amount, o.currency AS original_currency
       FROM (SELECT 1) AS one
       LEFT JOIN iso8583_inbound_reversal r ON r.tenant_id = $1 AND r.original_key = $2
       LEFT JOIN iso8583_inbound o ON o.tenant_id = $1 AND o.natural_key = $2`,
    values: [tenantId, originalKey],
  });
  const row = rows[0];
  const seen: SeenReversal = {};
  if (row?.natural_key != null) seen.stored = row as StoredCardResponse;
  if (row?.original_amount != null && row.original_currency != null) seen.original = { amountMinor: BigInt(row.original_amount), currency: row.original_currency };
  return seen;
}

export interface ReversalRow {
  tenantId: string;
  originalKey: string;
  naturalKey: string;
  mti: string;
  fingerprint: string;
  amountMinor: bigint;              // DE 4 as sent
  actualMinor: bigint | undefined;  // DE 95's actual amount
  undoneMinor: bigint;              // what was undone (0 when nothing)
  outcome: "released" | "reversed" | "reversed_to_suspense" | "nothing_to_reverse" | "orphan";
  response: Message;
  effectKey: string | null;
  connection: string;
}

/** Stores the answer to the first reversal of an original (without card data) in the transaction of its decision. */
export async function insertReversal(tx: Tx, row: ReversalRow): Promise<void> {
  await tx.query({
    name: "iso8583_inbound_reversal_insert",
    text: `INSERT INTO iso8583_inbound_reversal (tenant_id, original_key, natural_key, mti, fingerprint, amount_minor, outcome, response_code, response_mti, response_fields,
       effect_key, connection, actual_minor, undone_minor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    values: [row.tenantId, row.originalKey, row.naturalKey, row.mti, row.fingerprint, row.amountMinor.toString(), row.outcome, row.response.fields[de.responseCode], row.response.mti,
      JSON.stringify(storableFields(row.response)), row.effectKey, row.connection, row.actualMinor?.toString() ?? null, row.undoneMinor.toString()],
  });
}

/**
 * Our card records of one settlement date (the UTC day they were decided, which is also the value
 * date of the transfer they posted) in one currency, for the scheme totals' comparison
 * (recon/scheme-reconciliation.ts): financial requests and advices that posted (processing code
 * 2x a credit, else a debit), and reversals that reversed a posting, counted at the original's
 * amount, which is what the ledger reversed. Holds and their releases settle nothing and are left
 * out; so are declines.
 */
export const settledCardRecords: SettledRecordsReader = async (db, tenantId, date, currency) => {
  const processingCode = `'${de.processingCode}'`;
  type Row = { category: TotalsCategory; transfer_key: string; amount_minor: string };
  const { rows } = await db.query<Row>(
    `SELECT CASE WHEN i.response_fields->>${processingCode} LIKE '2%'
                 THEN 'credits' ELSE 'debits' END AS category,
            i.effect_key AS transfer_key, i.amount_minor::text
       FROM iso8583_inbound i
      WHERE i.tenant_id = $1
        AND i.created_at >= ($2::date::timestamp AT TIME ZONE 'UTC')
        AND i.created_at < (($2::date + 1)::timestamp AT TIME ZONE 'UTC')
        AND i.currency = $3
        AND i.mti_class IN ('020', '022') AND i.outcome IN ('posted', 'posted_to_suspense')
        AND i.effect_key IS NOT NULL
     UNION ALL
     SELECT CASE WHEN o.response_fields->>${processingCode} LIKE '2%'
                 THEN 'creditReversals' ELSE 'debitReversals' END,
            r.effect_key, o.amount_minor::text
       FROM iso8583_inbound_reversal r
       JOIN iso8583_inbound o ON o.tenant_id = r.tenant_id AND o.natural_key = r.original_key
      WHERE r.tenant_id = $1
        AND r.created_at >= ($2::date::timestamp AT TIME ZONE 'UTC')
        AND r.created_at < (($2::date + 1)::timestamp AT TIME ZONE 'UTC')
        AND o.currency = $3
        AND r.outcome = 'reversed' AND r.effect_key IS NOT NULL
      ORDER BY 2`,
    [tenantId, date, currency],
  );
  return rows.map((r) => ({
    category: r.category, transferKey: r.transfer_key, amountMinor: BigInt(r.amount_minor),
  }));
};
