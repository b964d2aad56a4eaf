import type { Pool, Queryable } from "../db/pool.ts";
import { enqueueEvent } from "../outbox/outbox-store.ts";
import type { Tx } from "../db/transaction.ts";
import { de, storableFields, type FieldValue, type Message } from "../protocols/iso8583/index.ts";

/**
 * The outbound authorization rows (acquirer side). Every state change is a conditional UPDATE on
 * the state it leaves, so a response and a timeout racing for one authorization cannot both win:
 * whichever commits first decides, and the other sees that it was too late.
 */
export type OutboundState = "sent" | "approved" | "declined" | "reversed";

export interface OutboundRow {
  tenantId: string;
  idemKey: string;
  attempt: number;
  connection: string;
  matchKey: string;
  stan: string;
  rrn: string;
  cardBin: string;
  cardLastFour: string;
  amountMinor: bigint;
  currency: string;
  requestFields: Record<string, FieldValue>;
  state: OutboundState;
  responseCode: string | null;
  responseFields: Record<string, FieldValue> | null;
  lateResponseCode: string | null;
  reversalState: "pending" | "acknowledged" | null;
  reversalFields: Record<string, FieldValue> | null;
  reversalMatchKey: string | null;
  reversalSends: number;
}

const COLUMNS = `tenant_id, idem_key, attempt, connection, match_key, system_trace_audit_number, retrieval_reference_number, card_bin,
  card_last_four, amount_minor, currency, request_fields, state, response_code, response_fields, late_response_code, reversal_state,
  reversal_fields, reversal_match_key, reversal_sends`;

interface Row {
  tenant_id: string; idem_key: string; attempt: number; connection: string; match_key: string; system_trace_audit_number: string;
  retrieval_reference_number: string; card_bin: string; card_last_four: string; amount_minor: bigint; currency: string;
  request_fields: Record<string, FieldValue>; state: OutboundState; response_code: string | null; response_fields: Record<string, FieldValue> | null;
  late_response_code: string | null; reversal_state: "pending" | "acknowledged" | null; reversal_fields: Record<string, FieldValue> | null;
  reversal_match_key: string | null; reversal_sends: number;
}

function toRow(row: Row): OutboundRow {
  return {
    tenantId: row.tenant_id, idemKey: row.idem_key, attempt: row.attempt, connection: row.connection, matchKey: row.match_key,
    stan: row.system_trace_audit_number, rrn: row.retrieval_reference_number, cardBin: row.card_bin, cardLastFour: row.card_last_four,
    amountMinor: row.amount_minor, currency: row.currency, requestFields: row.request_fields, state: row.state, responseCode: row.response_code,
    responseFields: row.response_fields, lateResponseCode: row.late_response_code, reversalState: row.reversal_state,
    reversalFields: row.reversal_fields, reversalMatchKey: row.reversal_match_key, reversalSends: row.reversal_sends,
  };
}

export interface NewOutbound {
  tenantId: string;
  idemKey: string;
  attempt: number;
  connection: string;
  matchKey: string;
  request: Message;          // the 0100 as sent; stored without card data
  cardHash: string;
  cardBin: string;
  cardLastFour: string;
  amountMinor: bigint;
  currency: string;
}

export async function insertOutbound(tx: Tx, outbound: NewOutbound): Promise<void> {
  await tx.query(
    `INSERT INTO iso8583_outbound (tenant_id, idem_key, attempt, connection, match_key, system_trace_audit_number, retrieval_reference_number,
       card_hash, card_bin, card_last_four, amount_minor, currency, request_fields, state)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'sent')`,
    [outbound.tenantId, outbound.idemKey, outbound.attempt, outbound.connection, outbound.matchKey,
      outbound.request.fields[de.systemTraceAuditNumber], outbound.request.fields[de.retrievalReferenceNumber],
      outbound.cardHash, outbound.cardBin, outbound.cardLastFour, outbound.amountMinor.toString(), outbound.currency,
      JSON.stringify(storableFields(outbound.request))],
  );
}

export async function findOutbound(db: Queryable, tenantId: string, idemKey: string, options: { forUpdate?: boolean } = {}): Promise<OutboundRow | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM iso8583_outbound WHERE tenant_id = $1 AND idem_key = $2${options.forUpdate ? " FOR UPDATE" : ""}`, [tenantId, idemKey]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** The scheme's answer decides a sent authorization; false when a reversal decided it first. */
export async function recordResponse(tx: Tx, tenantId: string, idemKey: string, response: Message): Promise<boolean> {
  const code = String(response.fields[de.responseCode] ?? "");
  const result = await tx.query(
    `UPDATE iso8583_outbound SET state = $3, response_code = $4, response_fields = $5, decided_at = now()
      WHERE tenant_id = $1 AND idem_key = $2 AND state = 'sent'`,
    [tenantId, idemKey, code === "00" ? "approved" : "declined", code, JSON.stringify(storableFields(response))],
  );
  return result.rowCount === 1;
}

/** The outcome is unknown: the reversal is persisted (due now) before it is first sent; false when a response decided first. */
export async function persistReversal(tx: Tx, tenantId: string, idemKey: string, reversal: Message, reversalMatchKey: string): Promise<boolean> {
  const result = await tx.query(
    `UPDATE iso8583_outbound SET state = 'reversed', reversal_state = 'pending', reversal_fields = $3, reversal_match_key = $4,
            reversal_next_at = now(), decided_at = now()
      WHERE tenant_id = $1 AND idem_key = $2 AND state = 'sent'`,
    [tenantId, idemKey, JSON.stringify(storableFields(reversal)), reversalMatchKey],
  );
  if (result.rowCount !== 1) return false;
  // Told in the reversal's transaction; the key is the authorization's own idempotency key.
  await enqueueEvent(tx, { tenantId, eventType: "authorization.reversed", eventKey: `${idemKey}:reversed`, data: { idempotency_key: idemKey, reversal_match_key: reversalMatchKey } });
  return true;
}

/** A response to a request already reversed: recorded, never turned into an approval. */
export async function recordLateResponse(db: Queryable, connection: string, matchKey: string, responseCode: string): Promise<boolean> {
  const result = await db.query(
    "UPDATE iso8583_outbound SET late_response_code = $3 WHERE connection = $1 AND match_key = $2 AND state = 'reversed'",
    [connection, matchKey, responseCode],
  );
  return (result.rowCount ?? 0) > 0;
}

export async function acknowledgeReversal(db: Queryable, connection: string, reversalMatchKey: string): Promise<boolean> {
  const result = await db.query(
    `UPDATE iso8583_outbound SET reversal_state = 'acknowledged', reversal_next_at = NULL
      WHERE connection = $1 AND reversal_match_key = $2 AND reversal_state = 'pending'`,
    [connection, reversalMatchKey],
  );
  return (result.rowCount ?? 0) > 0;
}

export async function dueReversals(db: Queryable, connection: string, rowsMax: number): Promise<OutboundRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM iso8583_outbound WHERE connection = $1 AND reversal_state = 'pending' AND reversal_next_at <= now()
      ORDER BY reversal_next_at LIMIT $2`,
    [connection, rowsMax],
  );
  return rows.map(toRow);
}

export async function pendingReversalCount(db: Queryable, connection: string): Promise<number> {
  const { rows } = await db.query<{ count: bigint }>("SELECT count(*) AS count FROM iso8583_outbound WHERE connection = $1 AND reversal_state = 'pending'", [connection]);
  return Number(rows[0]?.count ?? 0n);
}

/** After a send: the next repeat is due after a doubling backoff. */
export async function markReversalSent(db: Queryable, tenantId: string, idemKey: string, nextInMs: number): Promise<void> {
  await db.query(
    `UPDATE iso8583_outbound SET reversal_sends = reversal_sends + 1, reversal_next_at = now() + make_interval(secs => $3 / 1000.0)
      WHERE tenant_id = $1 AND idem_key = $2 AND reversal_state = 'pending'`,
    [tenantId, idemKey, nextInMs],
  );
}

/** Sent authorizations nobody decided (the process stopped while waiting): they must be reversed. */
export async function undecidedSends(db: Queryable, connection: string, olderThanMs: number, rowsMax: number): Promise<OutboundRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM iso8583_outbound WHERE connection = $1 AND state = 'sent' AND created_at < now() - make_interval(secs => $2 / 1000.0)
      ORDER BY created_at LIMIT $3`,
    [connection, olderThanMs, rowsMax],
  );
  return rows.map(toRow);
}

/**
 * The next block of system trace audit numbers of one outbound connection: the counter's new end
 * (iso8583_stan_counter, one write per block), so that a restart never hands out a number again.
 */
export async function reserveStanBlock(
  db: Queryable, connection: string, blockSize: number,
): Promise<bigint> {
  const { rows } = await db.query<{ allocated: bigint }>(
    `INSERT INTO iso8583_stan_counter (connection, allocated) VALUES ($1, $2)
     ON CONFLICT (connection) DO UPDATE SET allocated = iso8583_stan_counter.allocated + $2
     RETURNING allocated`,
    [connection, blockSize],
  );
  return rows[0]?.allocated ?? 0n;
}

/**
 * What the outbound scheme link (src/gateway/outbound-connection.ts) keeps in the database, by
 * connection name: its STAN counter, and the reversals and late responses of the authorizations
 * sent on it. The composition root hands it to the link, so the adapter holds no SQL.
 */
export interface SchemeLinkStore {
  reserveStans(connection: string, blockSize: number): Promise<bigint>;
  acknowledgeReversal(connection: string, reversalMatchKey: string): Promise<boolean>;
  recordLateResponse(connection: string, matchKey: string, responseCode: string): Promise<boolean>;
  dueReversals(connection: string, rowsMax: number): Promise<OutboundRow[]>;
  markReversalSent(tenantId: string, idemKey: string, nextInMs: number): Promise<void>;
  pendingReversalCount(connection: string): Promise<number>;
  undecidedSends(connection: string, olderThanMs: number, rowsMax: number): Promise<OutboundRow[]>;
}

export function schemeLinkStore(pool: Pool): SchemeLinkStore {
  return {
    reserveStans: (connection, blockSize) => reserveStanBlock(pool, connection, blockSize),
    acknowledgeReversal: (connection, matchKey) => acknowledgeReversal(pool, connection, matchKey),
    recordLateResponse: (connection, matchKey, code) => recordLateResponse(pool, connection, matchKey, code),
    dueReversals: (connection, rowsMax) => dueReversals(pool, connection, rowsMax),
    markReversalSent: (tenantId, idemKey, nextInMs) => markReversalSent(pool, tenantId, idemKey, nextInMs),
    pendingReversalCount: (connection) => pendingReversalCount(pool, connection),
    undecidedSends: (connection, olderMs, rowsMax) => undecidedSends(pool, connection, olderMs, rowsMax),
  };
}
