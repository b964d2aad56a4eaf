import type { Pool, Queryable } from "../db/pool.ts";
import { sqlState, withTransaction, type Tx } from "../db/transaction.ts";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import { storableFields, textField } from "./messages.ts";

/**
 * The issuer side's response store (iso8583_inbound): one row per original answered, its
 * decision and its response without card data, written in the transaction that made the effect.
 * It is the channel's own contract, like the HTTP idempotency record: a repeat is answered from
 * here. Whether a key was seen, and with what content, is the record core's (ingest_record_key).
 * Every original runs these statements, so each is named: prepared once per connection, not
 * parsed and planned per message.
 */

/** Serializes everything that concerns one original: its repeats, its reversal. */
export async function lockOriginal(tx: Tx, tenantId: string, originalKey: string): Promise<void> {
  await tx.query({ name: "iso8583_lock_original", text: "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", values: [tenantId, originalKey] });
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
export function positionOf(message: Message): string {
  return `mti=${message.mti} stan=${textField(message, 11) ?? ""} rrn=${textField(message, 37) ?? ""}`;
}

export interface StoredResponse {
  natural_key: string;
  fingerprint: string;
  outcome: string;
  response_mti: string;
  response_fields: Record<string, FieldValue>;
  effect_key: string | null;
}

export interface SeenOriginal {
  stored?: StoredResponse;          // the row of this key, else of this RRN in the message class (the second link)
  reversalKey?: string;             // a reversal of this key that arrived first
}

/**
 * What was answered under this key (else this RRN) and whether its reversal came first: one read,
 * after the original's lock. Each arm is an equality on a whole unique index, so the plan stays an
 * index lookup even when the statement's prepared plan is the generic one.
 */
export async function selectSeen(db: Queryable, tenantId: string, naturalKey: string, mtiClass: string, rrn: string | undefined): Promise<SeenOriginal> {
  const { rows } = await db.query<Partial<StoredResponse> & { reversal_key: string | null }>({
    name: "iso8583_inbound_seen",
    text: `SELECT s.natural_key, s.fingerprint, s.outcome, s.response_mti, s.response_fields, s.effect_key,
            (SELECT r.natural_key FROM iso8583_inbound_reversal r WHERE r.tenant_id = $1 AND r.original_key = $2) AS reversal_key
       FROM (SELECT 1) AS one
       LEFT JOIN LATERAL (
         SELECT natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM (
           SELECT 1 AS link, natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM iso8583_inbound
            WHERE tenant_id = $1 AND natural_key = $2
           UNION ALL
           SELECT 2, natural_key, fingerprint, outcome, response_mti, response_fields, effect_key FROM iso8583_inbound
            WHERE tenant_id = $1 AND mti_class = $3 AND retrieval_reference_number = $4
         ) AS linked ORDER BY link LIMIT 1) AS s ON true`,
    values: [tenantId, naturalKey, mtiClass, rrn ?? null],
  });
  const row = rows[0];
  const seen: SeenOriginal = {};
  if (row?.natural_key != null) seen.stored = row as StoredResponse;
  if (row?.reversal_key != null) seen.reversalKey = row.reversal_key;
  return seen;
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

/** Stores the answer to an original (without card data) in the transaction of its decision. */
export async function insertInbound(tx: Tx, row: InboundRow): Promise<void> {
  await tx.query({
    name: "iso8583_inbound_insert",
    text: `INSERT INTO iso8583_inbound (tenant_id, natural_key, mti_class, retrieval_reference_number, mti, fingerprint, card_hash, account_id,
       amount_minor, currency, outcome, response_code, response_mti, response_fields, effect_key, connection)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    values: [row.tenantId, row.naturalKey, row.mtiClass, row.rrn ?? null, row.mti, row.fingerprint, row.cardHash, row.accountId,
      row.amountMinor.toString(), row.currency, row.outcome, row.response.fields[39], row.response.mti, JSON.stringify(storableFields(row.response)),
      row.effectKey, row.connection],
  });
}

export interface SeenReversal {
  stored?: StoredResponse;          // the first reversal's answer (iso8583_inbound_reversal: one per original)
  original?: { amountMinor: bigint; currency: string };   // the original as answered, when it was and with a currency
}

/** The answer stored for a reversal of this original, and the original as answered: one read, after the original's lock. */
export async function selectReversalSeen(db: Queryable, tenantId: string, originalKey: string): Promise<SeenReversal> {
  const { rows } = await db.query<Partial<StoredResponse> & { original_amount: string | null; original_currency: string | null }>({
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
  if (row?.natural_key != null) seen.stored = row as StoredResponse;
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
    values: [row.tenantId, row.originalKey, row.naturalKey, row.mti, row.fingerprint, row.amountMinor.toString(), row.outcome, row.response.fields[39], row.response.mti,
      JSON.stringify(storableFields(row.response)), row.effectKey, row.connection, row.actualMinor?.toString() ?? null, row.undoneMinor.toString()],
  });
}
