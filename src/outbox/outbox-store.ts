import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import type { OutboxMessage } from "./deliverer.ts";

/**
 * The one module with the outbox's SQL (table outbox_message, migration 0009). Writers enqueue
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

/**
 * Writes one outbox row inside the caller's transaction. The same intent enqueued twice (a
 * replayed decision) is one row: the unique index (tenant, destination, key) arbitrates.
 */
export async function enqueueOutbox(db: Tx | Queryable, message: OutboxMessageDraft): Promise<void> {
  await db.query(
    `INSERT INTO outbox_message (tenant_id, destination, message_type, message_key, payload)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, destination, message_key) DO NOTHING`,
    [message.tenantId, message.destination, message.messageType, message.messageKey, JSON.stringify(message.payload)],
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
      messages.map((m) => m.messageKey), messages.map((m) => JSON.stringify(m.payload)),
    ],
  );
}

export type { OutboxMessage };
