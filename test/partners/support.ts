import type { Pool } from "../../src/db/pool.ts";
import type { OutboxMessage } from "../../src/outbox/deliverer.ts";

/** The outbox rows for one destination of a tenant, as the relay hands them to a deliverer. */
export async function outboxMessages(pool: Pool, tenantId: string, destination: string): Promise<OutboxMessage[]> {
  const { rows } = await pool.query<{ id: string; message_type: string; message_key: string; payload: unknown; attempts: number; created_at: Date }>(
    `SELECT id::text, message_type, message_key, payload, attempts, created_at FROM outbox_message
      WHERE tenant_id = $1 AND destination = $2 ORDER BY id`, [tenantId, destination]);
  return rows.map((r) => ({ tenantId, id: r.id, destination, messageType: r.message_type, messageKey: r.message_key, payload: r.payload, attempts: r.attempts + 1, createdAt: r.created_at }));
}
