import { currentConfig, type Config } from "../config/config.ts";
import type { Queryable } from "../db/pool.ts";
import { StatementParams } from "../db/statement-parts.ts";
import type { Tx } from "../db/transaction.ts";
import type { OutboxMessage } from "./deliverer.ts";

/**
 * The one module with the outbox's SQL (table outbox_message, migration 0013). Writers enqueue
 * inside the transaction of their decision; the relay leases, marks and retries; operators list,
 * show and retry dead letters.
 */
export interface OutboxMessageDraft {
  tenantId: string;
  destination: string;
  messageType: string;
  messageKey: string;
  payload: unknown;
}

/** Payload as JSON; amounts in minor units (bigint) go out as decimal strings, never as floats. */
function payloadJson(payload: unknown): string {
  return JSON.stringify(payload, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
}

/**
 * Writes one outbox row inside the caller's transaction. The same intent enqueued twice (a
 * replayed decision) is one row: the unique index (tenant, destination, key) arbitrates.
 */
export async function enqueueOutbox(db: Tx | Queryable, message: OutboxMessageDraft): Promise<void> {
  await db.query(
    `INSERT INTO outbox_message (tenant_id, destination, message_type, message_key, payload)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, destination, message_key) DO NOTHING`,
    [message.tenantId, message.destination, message.messageType, message.messageKey, payloadJson(message.payload)],
  );
}

/** Several rows in one statement (a file's decisions); duplicates collapse as in enqueueOutbox. */
export async function enqueueOutboxMany(db: Tx | Queryable, messages: readonly OutboxMessageDraft[]): Promise<void> {
  if (messages.length === 0) return;
  await db.query(
    `INSERT INTO outbox_message (tenant_id, destination, message_type, message_key, payload)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[])
     ON CONFLICT (tenant_id, destination, message_key) DO NOTHING`,
    [
      messages.map((m) => m.tenantId), messages.map((m) => m.destination), messages.map((m) => m.messageType),
      messages.map((m) => m.messageKey), messages.map((m) => payloadJson(m.payload)),
    ],
  );
}


interface MessageRow {
  tenant_id: string; id: bigint; destination: string; message_type: string; message_key: string; payload: unknown;
  attempts: number; created_at: Date;
}

function toMessage(row: MessageRow): OutboxMessage {
  return {
    tenantId: row.tenant_id, id: row.id.toString(), destination: row.destination, messageType: row.message_type,
    messageKey: row.message_key, payload: row.payload, attempts: row.attempts, createdAt: row.created_at,
  };
}

/**
 * Leases up to `rowsMax` due rows for `relayId` in one autocommitted statement. SKIP LOCKED lets
 * several relays lease at once without waiting on each other; a row stays `delivering` until its
 * lease ends, then it is due again (next_attempt_at = lease_until), so a dead relay's rows are
 * taken over. The bumped `attempts` is the lease's fencing token.
 */
export async function leaseDue(db: Queryable, relayId: string, rowsMax: number, leaseMs: number): Promise<OutboxMessage[]> {
  const { rows } = await db.query<MessageRow>(
    `WITH due AS (
       SELECT tenant_id, id FROM outbox_message
        WHERE state IN ('pending', 'delivering') AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT $1
        FOR UPDATE SKIP LOCKED)
     UPDATE outbox_message m
        SET state = 'delivering', attempts = m.attempts + 1, leased_by = $2,
            lease_until = now() + make_interval(secs => $3 / 1000.0),
            next_attempt_at = now() + make_interval(secs => $3 / 1000.0)
       FROM due WHERE m.tenant_id = due.tenant_id AND m.id = due.id
     RETURNING m.tenant_id, m.id, m.destination, m.message_type, m.message_key, m.payload, m.attempts, m.created_at`,
    [rowsMax, relayId, leaseMs],
  );
  return rows.map(toMessage);
}

/** A leased row and the attempt that leased it: a mark applies only while that lease holds. */
export interface LeaseRef { tenantId: string; id: string; attempts: number }

/** Marks delivered the rows whose lease is still this attempt's; returns how many were. */
export async function markDelivered(db: Queryable, leases: readonly LeaseRef[]): Promise<number> {
  if (leases.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE outbox_message m
        SET state = 'delivered', delivered_at = now(), lease_until = NULL, last_error = NULL
       FROM unnest($1::text[], $2::bigint[], $3::int[]) AS l(tenant_id, id, attempts)
      WHERE m.tenant_id = l.tenant_id AND m.id = l.id AND m.attempts = l.attempts AND m.state = 'delivering'`,
    [leases.map((l) => l.tenantId), leases.map((l) => l.id), leases.map((l) => l.attempts)],
  );
  return rowCount ?? 0;
}

/**
 * Marks a delivered batch (fenced as in markDelivered) and leases the next one in one statement,
 * so a busy relay commits once per batch instead of twice (docs/decisions/0024). The lease skips
 * the rows being marked: one whose lease ran out is due, and a row may be changed once per statement.
 */
export async function markDeliveredAndLease(db: Queryable, leases: readonly LeaseRef[], relayId: string, rowsMax: number, leaseMs: number): Promise<{ marked: number; next: OutboxMessage[] }> {
  const { rows } = await db.query<MessageRow & { marked: number }>(
    `WITH done AS (
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) AS l(tenant_id, id, attempts)),
     marked AS (
       UPDATE outbox_message m
          SET state = 'delivered', delivered_at = now(), lease_until = NULL, last_error = NULL
         FROM done WHERE m.tenant_id = done.tenant_id AND m.id = done.id AND m.attempts = done.attempts AND m.state = 'delivering'
       RETURNING 1),
     due AS (
       SELECT tenant_id, id FROM outbox_message
        WHERE state IN ('pending', 'delivering') AND next_attempt_at <= now()
          AND (tenant_id, id) NOT IN (SELECT tenant_id, id FROM done)
        ORDER BY next_attempt_at
        LIMIT $4
        FOR UPDATE SKIP LOCKED),
     leased AS (
       UPDATE outbox_message m
          SET state = 'delivering', attempts = m.attempts + 1, leased_by = $5,
              lease_until = now() + make_interval(secs => $6 / 1000.0),
              next_attempt_at = now() + make_interval(secs => $6 / 1000.0)
         FROM due WHERE m.tenant_id = due.tenant_id AND m.id = due.id
       RETURNING m.tenant_id, m.id, m.destination, m.message_type, m.message_key, m.payload, m.attempts, m.created_at)
     SELECT leased.*, (SELECT count(*)::int FROM marked) AS marked FROM leased
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, (SELECT count(*)::int FROM marked) WHERE NOT EXISTS (SELECT 1 FROM leased)`,
    [leases.map((l) => l.tenantId), leases.map((l) => l.id), leases.map((l) => l.attempts), rowsMax, relayId, leaseMs],
  );
  const marked = rows[0]?.marked ?? 0;
  return { marked, next: rows.filter((row) => row.id !== null).map(toMessage) };
}

/** A failed attempt: due again after `retryInMs`, or dead when `dead`. Fenced like markDelivered. */
export async function markFailed(db: Queryable, lease: LeaseRef, error: string, outcome: { dead: true } | { dead: false; retryInMs: number }): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE outbox_message
        SET state = $4, last_error = $5, lease_until = NULL,
            next_attempt_at = now() + make_interval(secs => $6 / 1000.0)
      WHERE tenant_id = $1 AND id = $2 AND attempts = $3 AND state = 'delivering'`,
    [lease.tenantId, lease.id, lease.attempts, outcome.dead ? "dead" : "pending", error, outcome.dead ? 0 : outcome.retryInMs],
  );
  return rowCount === 1;
}

// held: for a destination that takes nothing now (a disabled webhook endpoint), until it is enabled.
/** A leased row whose destination is disabled: held, fenced like markDelivered. */
export async function markHeld(db: Queryable, lease: LeaseRef, error: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE outbox_message SET state = 'held', last_error = $4, lease_until = NULL
      WHERE tenant_id = $1 AND id = $2 AND attempts = $3 AND state = 'delivering'`,
    [lease.tenantId, lease.id, lease.attempts, error],
  );
  return rowCount === 1;
}

export type OutboxState = "pending" | "delivering" | "delivered" | "dead" | "held";

export interface OutboxRow {
  tenantId: string; id: string; destination: string; messageType: string; messageKey: string; state: OutboxState;
  attempts: number; nextAttemptAt: string; lastError: string | null; createdAt: string; deliveredAt: string | null; payload?: unknown;
}

const ROW_COLUMNS = `tenant_id, id::text AS id, destination, message_type, message_key, state, attempts,
  to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next_attempt_at, last_error,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS delivered_at`;

interface ListedRow {
  tenant_id: string; id: string; destination: string; message_type: string; message_key: string; state: OutboxState;
  attempts: number; next_attempt_at: string; last_error: string | null; created_at: string; delivered_at: string | null; payload?: unknown;
}

function toRow(row: ListedRow): OutboxRow {
  return {
    tenantId: row.tenant_id, id: row.id, destination: row.destination, messageType: row.message_type, messageKey: row.message_key,
    state: row.state, attempts: row.attempts, nextAttemptAt: row.next_attempt_at, lastError: row.last_error, createdAt: row.created_at,
    deliveredAt: row.delivered_at, ...(row.payload === undefined ? {} : { payload: row.payload }),
  };
}

/** An outbox row as the operations API and `clearline outbox --json` show it (0107). */
export interface OutboxMessageView {
  id: string; tenant_id: string; destination: string; message_type: string; message_key: string;
  state: OutboxState; attempts: number; next_attempt_at: string; last_error: string | null;
  created_at: string; delivered_at: string | null; payload?: unknown;
}

export function outboxMessageView(row: OutboxRow): OutboxMessageView {
  return {
    id: row.id, tenant_id: row.tenantId, destination: row.destination,
    message_type: row.messageType, message_key: row.messageKey, state: row.state,
    attempts: row.attempts, next_attempt_at: row.nextAttemptAt, last_error: row.lastError,
    created_at: row.createdAt, delivered_at: row.deliveredAt,
    ...(row.payload === undefined ? {} : { payload: row.payload }),
  };
}

/** Rows of a tenant, newest first, optionally in one state. */
export async function listOutbox(db: Queryable, tenantId: string, filter: { state?: OutboxState }, rowsMax: number): Promise<OutboxRow[]> {
  const { rows } = await db.query<ListedRow>(
    `SELECT ${ROW_COLUMNS} FROM outbox_message
      WHERE tenant_id = $1 AND ($2::text IS NULL OR state = $2)
      ORDER BY id DESC LIMIT $3`,
    [tenantId, filter.state ?? null, rowsMax],
  );
  return rows.map(toRow);
}

export async function findOutbox(db: Queryable, tenantId: string, id: string): Promise<OutboxRow | undefined> {
  const { rows } = await db.query<ListedRow>(`SELECT ${ROW_COLUMNS}, payload FROM outbox_message WHERE tenant_id = $1 AND id = $2::bigint`, [tenantId, id]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

/**
 * An operator's retry of a dead letter: due now with a fresh attempt budget. Only dead rows: a
 * pending or delivering row is already on its way, a delivered one must not be sent again.
 */
export async function retryDead(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE outbox_message SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL
      WHERE tenant_id = $1 AND id = $2::bigint AND state = 'dead'`,
    [tenantId, id],
  );
  return rowCount === 1;
}

/** A tenant's outbox messages written in one hour (UTC) and the longest any took to leave. */
export interface OutboxLagOfHour { hour: string; messages: number; lagSecondsMax: number }

/**
 * Per hour of the last `hours` with messages: how many were written, and the most seconds one of
 * them took from written to delivered (one not delivered yet counts until now), rounded up.
 */
export async function outboxLagPerHour(
  db: Queryable, tenantId: string, hours: number,
): Promise<OutboxLagOfHour[]> {
  const { rows } = await db.query<{ hour: string; messages: number; lag_seconds_max: number }>(
    `SELECT to_char(date_trunc('hour', created_at AT TIME ZONE 'UTC'),
                    'YYYY-MM-DD"T"HH24":00Z"') AS hour,
            count(*)::int AS messages,
            ceil(max(extract(epoch FROM coalesce(delivered_at, now()) - created_at)))::int
              AS lag_seconds_max
       FROM outbox_message
      WHERE tenant_id = $1 AND created_at >= now() - make_interval(hours => $2)
      GROUP BY 1
      ORDER BY 1`,
    [tenantId, hours]);
  return rows.map((r) => ({
    hour: r.hour, messages: r.messages, lagSecondsMax: r.lag_seconds_max,
  }));
}

/** Seconds since the oldest undelivered (pending or delivering) row was written; 0 when none. */
export async function oldestUndeliveredAgeSeconds(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ age: number | null }>(
    `SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM outbox_message WHERE state IN ('pending', 'delivering')`,
  );
  return rows[0]?.age ?? 0;
}

/** An event that happened (payment.applied, record.conflict, ...) under a key derived from its intent. */
export interface OutboxEvent {
  tenantId: string;
  eventType: string;
  eventKey: string;   // e.g. '<transfer key>:applied'; the Webhook-Id and Nats-Msg-Id
  data: unknown;
}

/**
 * Fans an event out in the caller's transaction, in one statement: one row per webhook endpoint
 * of the tenant subscribed to its type, and one for NATS when this process publishes events
 * (natsUrl configured; docs/decisions/0024). A replayed decision writes nothing new.
 */
export async function enqueueEvent(db: Tx | Queryable, event: OutboxEvent, options: { nats: boolean } = { nats: natsEventsEnabled() }): Promise<void> {
  await db.query(
    `INSERT INTO outbox_message (tenant_id, destination, message_type, message_key, payload)
     SELECT $1, d.destination, $2, $3, $4::jsonb
       FROM (SELECT 'webhook:' || endpoint_id AS destination FROM webhook_endpoint
              WHERE tenant_id = $1 AND disabled_at IS NULL AND $2 = ANY (event_types)
             UNION ALL SELECT 'nats' WHERE $5) AS d
     ON CONFLICT (tenant_id, destination, message_key) DO NOTHING`,
    [event.tenantId, event.eventType, event.eventKey, payloadJson(event.data), options.nats],
  );
}

/**
 * Whether events also go to JetStream: natsUrl in this process's configuration (the config file's
 * `natsUrl` or CLEARLINE_NATS_URL, as for the relay's NATS deliverer; docs/decisions/0024).
 */
export function natsEventsEnabled(config: Pick<Config, "natsUrl"> = currentConfig()): boolean {
  return config.natsUrl !== undefined;
}

/** Several events in one statement (a chunk's held records), fanned out as in enqueueEvent. */
export async function enqueueEvents(db: Tx | Queryable, events: readonly OutboxEvent[], options: { nats: boolean } = { nats: natsEventsEnabled() }): Promise<void> {
  if (events.length === 0) return;
  const params = new StatementParams();
  const text = enqueueEventsPart(params, events, options);
  await db.query(text, params.values);
}

/**
 * `enqueueEvents` as a part of a larger statement (a data-modifying CTE body; src/db/statement-parts.ts),
 * for a writer that sends its rows, its events and its completion as one statement. Empty
 * `events` insert nothing.
 */
export function enqueueEventsPart(params: StatementParams, events: readonly OutboxEvent[], options: { nats: boolean } = { nats: natsEventsEnabled() }): string {
  return `INSERT INTO outbox_message (tenant_id, destination, message_type, message_key, payload)
     SELECT e.tenant_id, d.destination, e.event_type, e.event_key, e.data
       FROM unnest(${params.add(events.map((e) => e.tenantId), "text[]")}, ${params.add(events.map((e) => e.eventType), "text[]")},
                   ${params.add(events.map((e) => e.eventKey), "text[]")}, ${params.add(events.map((e) => payloadJson(e.data)), "jsonb[]")})
            AS e(tenant_id, event_type, event_key, data)
       CROSS JOIN LATERAL (
             SELECT 'webhook:' || w.endpoint_id AS destination FROM webhook_endpoint w
              WHERE w.tenant_id = e.tenant_id AND w.disabled_at IS NULL AND e.event_type = ANY (w.event_types)
             UNION ALL SELECT 'nats' WHERE ${params.add(options.nats, "boolean")}) AS d
     ON CONFLICT (tenant_id, destination, message_key) DO NOTHING`;
}
