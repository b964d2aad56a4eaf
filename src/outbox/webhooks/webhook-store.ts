import { randomBytes } from "node:crypto";
import type { Queryable } from "../../db/pool.ts";
import type { WebhookSecretKeys } from "./secret-box.ts";

/** The one module with the SQL of webhook_endpoint (migration 0013; docs/decisions/0024). */
export interface WebhookEndpoint {
  tenantId: string;
  endpointId: string;
  url: string;
  eventTypes: string[];
  createdAt: string;
}

/** An endpoint as `webhook list` and the operations API show it: its status, never its secret. */
export interface ListedWebhookEndpoint extends WebhookEndpoint {
  status: "active" | "disabled";
  disabledAt: string | null;
  disabledReason: string | null;
  heldEvents: number;     // undelivered events waiting for `webhook enable`
}

/** An endpoint as the operations API and `clearline webhook list --json` show it (0107). */
export interface WebhookEndpointView {
  endpoint_id: string; url: string; event_types: string[]; status: ListedWebhookEndpoint["status"];
  disabled_at: string | null; disabled_reason: string | null; held_events: number;
  created_at: string;
}

export function webhookEndpointView(e: ListedWebhookEndpoint): WebhookEndpointView {
  return {
    endpoint_id: e.endpointId, url: e.url, event_types: e.eventTypes, status: e.status,
    disabled_at: e.disabledAt, disabled_reason: e.disabledReason, held_events: e.heldEvents,
    created_at: e.createdAt,
  };
}

/** Where and with what to sign a delivery, and why the endpoint takes nothing now (when it is disabled). */
export interface WebhookTarget { url: string; signingSecret: string; disabledReason: string | undefined }

const timeText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Adds an endpoint; its signing secret is stored sealed with the service's key, never in clear (0065). */
export async function addWebhookEndpoint(
  db: Queryable, tenantId: string, url: string, eventTypes: readonly string[], signingSecret: string, keys: WebhookSecretKeys,
): Promise<WebhookEndpoint> {
  const endpointId = `ep_${randomBytes(8).toString("hex")}`;
  const { rows } = await db.query<{ created_at: string }>(
    `INSERT INTO webhook_endpoint (tenant_id, endpoint_id, url, event_types, signing_secret_sealed) VALUES ($1, $2, $3, $4, $5)
     RETURNING to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    [tenantId, endpointId, url, eventTypes, keys.seal(tenantId, endpointId, signingSecret)],
  );
  return { tenantId, endpointId, url, eventTypes: [...eventTypes], createdAt: rows[0]?.created_at ?? "" };
}

export async function countWebhookEndpoints(db: Queryable, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoint WHERE tenant_id = $1 AND disabled_at IS NULL`, [tenantId]);
  return rows[0]?.n ?? 0;
}

/** Endpoints of a tenant, disabled ones too, without their secrets (a read never shows one). */
export async function listWebhookEndpoints(db: Queryable, tenantId: string): Promise<ListedWebhookEndpoint[]> {
  const { rows } = await db.query<{
    endpoint_id: string; url: string; event_types: string[]; created_at: string; disabled_at: string | null; disabled_reason: string | null; held_events: number;
  }>(
    `SELECT w.endpoint_id, w.url, w.event_types, ${timeText("w.created_at")} AS created_at,
            ${timeText("w.disabled_at")} AS disabled_at, w.disabled_reason,
            (SELECT count(*) FROM outbox_message m
              WHERE m.tenant_id = w.tenant_id AND m.destination = 'webhook:' || w.endpoint_id AND m.state = 'held')::int AS held_events
       FROM webhook_endpoint w WHERE w.tenant_id = $1 ORDER BY w.created_at, w.endpoint_id`,
    [tenantId],
  );
  return rows.map((r) => ({
    tenantId, endpointId: r.endpoint_id, url: r.url, eventTypes: r.event_types, createdAt: r.created_at,
    status: r.disabled_at === null ? "active" : "disabled", disabledAt: r.disabled_at, disabledReason: r.disabled_reason, heldEvents: r.held_events,
  }));
}

/**
 * Where and with what to sign a delivery; undefined when the endpoint was removed. The secret is
 * opened with the service's key; one still in clear (stored before migration 0027 and not yet
 * sealed by migrate or serve) is used as it is.
 */
export async function findWebhookTarget(db: Queryable, tenantId: string, endpointId: string, keys: WebhookSecretKeys): Promise<WebhookTarget | undefined> {
  const { rows } = await db.query<{
    url: string; signing_secret: string | null; signing_secret_sealed: string | null; disabled_at: Date | null; disabled_reason: string | null;
  }>(
    `SELECT url, signing_secret, signing_secret_sealed, disabled_at, disabled_reason FROM webhook_endpoint WHERE tenant_id = $1 AND endpoint_id = $2`,
    [tenantId, endpointId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const disabledReason = row.disabled_at === null ? undefined : (row.disabled_reason ?? "disabled");
  const signingSecret = row.signing_secret_sealed !== null ? keys.open(tenantId, endpointId, row.signing_secret_sealed) : row.signing_secret;
  if (signingSecret === null) throw new Error(`webhook endpoint ${endpointId} has no signing secret (the table's check forbids it)`);
  return { url: row.url, signingSecret, disabledReason };
}

/**
 * Seals the signing secrets still stored in clear (before migration 0027), a bounded statement at
 * a time, each row only if it still holds the secret read; the clear column is emptied in the same
 * update. Run by `clearline migrate` and at `clearline serve` start. Answers how many it sealed.
 * `keysOf` is called only when a secret is found, so a migrate with none reads no key file.
 */
export async function sealClearWebhookSecrets(db: Queryable, keysOf: () => WebhookSecretKeys, rowsPerStatementMax: number): Promise<number> {
  let sealed = 0;
  for (;;) {
    const { rows } = await db.query<{ tenant_id: string; endpoint_id: string; signing_secret: string }>(
      `SELECT tenant_id, endpoint_id, signing_secret FROM webhook_endpoint WHERE signing_secret IS NOT NULL
        ORDER BY tenant_id, endpoint_id LIMIT $1`,
      [rowsPerStatementMax],
    );
    if (rows.length === 0) return sealed;
    const keys = keysOf();   // read (or created) only when there is a secret to seal
    const { rowCount } = await db.query(
      `UPDATE webhook_endpoint w SET signing_secret_sealed = s.sealed, signing_secret = NULL
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS s(tenant_id, endpoint_id, clear, sealed)
        WHERE w.tenant_id = s.tenant_id AND w.endpoint_id = s.endpoint_id AND w.signing_secret = s.clear`,
      [rows.map((r) => r.tenant_id), rows.map((r) => r.endpoint_id), rows.map((r) => r.signing_secret),
        rows.map((r) => keys.seal(r.tenant_id, r.endpoint_id, r.signing_secret))],
    );
    sealed += rowCount ?? 0;
  }
}

/**
 * Disables an endpoint that answered 410 Gone, saying why, and holds its pending events, in one
 * statement (docs/decisions/0065). `disabledNow` is true for the one call that disabled it, so
 * the disable is told once however many deliveries heard the 410. Rows being delivered are held
 * by their own delivery (fenced by their lease).
 */
export async function disableWebhookEndpoint(db: Queryable, tenantId: string, endpointId: string, reason: string): Promise<{ disabledNow: boolean; held: number }> {
  const { rows } = await db.query<{ disabled: number; held: number }>(
    `WITH disabled AS (
       UPDATE webhook_endpoint SET disabled_at = now(), disabled_reason = $3
        WHERE tenant_id = $1 AND endpoint_id = $2 AND disabled_at IS NULL
       RETURNING 1),
     held AS (
       UPDATE outbox_message SET state = 'held', last_error = $3
        WHERE tenant_id = $1 AND destination = 'webhook:' || $2 AND state = 'pending'
       RETURNING 1)
     SELECT (SELECT count(*) FROM disabled)::int AS disabled, (SELECT count(*) FROM held)::int AS held`,
    [tenantId, endpointId, reason],
  );
  return { disabledNow: (rows[0]?.disabled ?? 0) > 0, held: rows[0]?.held ?? 0 };
}

/**
 * Enables an endpoint again: later events are written for it, and its held events are due now
 * with a fresh attempt budget. Undefined when the tenant has no such endpoint.
 */
export async function enableWebhookEndpoint(db: Queryable, tenantId: string, endpointId: string): Promise<{ wasDisabled: boolean; released: number } | undefined> {
  const { rows } = await db.query<{ found: number; enabled: number; released: number }>(
    `WITH found AS (
       SELECT 1 FROM webhook_endpoint WHERE tenant_id = $1 AND endpoint_id = $2),
     enabled AS (
       UPDATE webhook_endpoint SET disabled_at = NULL, disabled_reason = NULL
        WHERE tenant_id = $1 AND endpoint_id = $2 AND disabled_at IS NOT NULL
       RETURNING 1),
     released AS (
       UPDATE outbox_message SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL
        WHERE tenant_id = $1 AND destination = 'webhook:' || $2 AND state = 'held'
       RETURNING 1)
     SELECT (SELECT count(*) FROM found)::int AS found, (SELECT count(*) FROM enabled)::int AS enabled,
            (SELECT count(*) FROM released)::int AS released`,
    [tenantId, endpointId],
  );
  const row = rows[0];
  if (!row || row.found === 0) return undefined;
  return { wasDisabled: row.enabled > 0, released: row.released };
}

/** Whether the tenant's endpoint takes events now; undefined when it has no such endpoint. */
export async function webhookEndpointState(
  db: Queryable, tenantId: string, endpointId: string,
): Promise<"active" | "disabled" | undefined> {
  const { rows } = await db.query<{ disabled: boolean }>(
    `SELECT disabled_at IS NOT NULL AS disabled
       FROM webhook_endpoint
      WHERE tenant_id = $1 AND endpoint_id = $2`,
    [tenantId, endpointId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.disabled ? "disabled" : "active";
}

/**
 * Removes an endpoint (docs/decisions/0106): no event is written for it any more, and its
 * undelivered rows are dead letters when the relay reaches them (WEBHOOK_ENDPOINT_GONE), kept for
 * the record. True when it existed.
 */
export async function removeWebhookEndpoint(
  db: Queryable, tenantId: string, endpointId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    "DELETE FROM webhook_endpoint WHERE tenant_id = $1 AND endpoint_id = $2",
    [tenantId, endpointId],
  );
  return rowCount === 1;
}
