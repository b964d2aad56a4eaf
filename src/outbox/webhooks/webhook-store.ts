import { randomBytes } from "node:crypto";
import type { Queryable } from "../../db/pool.ts";

/** The one module with the SQL of webhook_endpoint (migration 0009; docs/decisions/0024). */
export interface WebhookEndpoint {
  tenantId: string;
  endpointId: string;
  url: string;
  eventTypes: string[];
  createdAt: string;
}

export interface WebhookTarget { url: string; signingSecret: string }

export async function addWebhookEndpoint(db: Queryable, tenantId: string, url: string, eventTypes: readonly string[], signingSecret: string): Promise<WebhookEndpoint> {
  const endpointId = `ep_${randomBytes(8).toString("hex")}`;
  const { rows } = await db.query<{ created_at: string }>(
    `INSERT INTO webhook_endpoint (tenant_id, endpoint_id, url, event_types, signing_secret) VALUES ($1, $2, $3, $4, $5)
     RETURNING to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    [tenantId, endpointId, url, eventTypes, signingSecret],
  );
  return { tenantId, endpointId, url, eventTypes: [...eventTypes], createdAt: rows[0]?.created_at ?? "" };
}

export async function countWebhookEndpoints(db: Queryable, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoint WHERE tenant_id = $1 AND disabled_at IS NULL`, [tenantId]);
  return rows[0]?.n ?? 0;
}

/** Endpoints of a tenant, without their secrets (a read never shows one). */
export async function listWebhookEndpoints(db: Queryable, tenantId: string): Promise<WebhookEndpoint[]> {
  const { rows } = await db.query<{ endpoint_id: string; url: string; event_types: string[]; created_at: string }>(
    `SELECT endpoint_id, url, event_types, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
       FROM webhook_endpoint WHERE tenant_id = $1 AND disabled_at IS NULL ORDER BY created_at, endpoint_id`,
    [tenantId],
  );
  return rows.map((r) => ({ tenantId, endpointId: r.endpoint_id, url: r.url, eventTypes: r.event_types, createdAt: r.created_at }));
}

/** Where and with what to sign a delivery; undefined when the endpoint was removed or disabled. */
export async function findWebhookTarget(db: Queryable, tenantId: string, endpointId: string): Promise<WebhookTarget | undefined> {
  const { rows } = await db.query<{ url: string; signing_secret: string }>(
    `SELECT url, signing_secret FROM webhook_endpoint WHERE tenant_id = $1 AND endpoint_id = $2 AND disabled_at IS NULL`,
    [tenantId, endpointId],
  );
  return rows[0] ? { url: rows[0].url, signingSecret: rows[0].signing_secret } : undefined;
}
