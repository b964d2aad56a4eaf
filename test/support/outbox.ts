import { randomBytes } from "node:crypto";
import type { Queryable } from "../../src/db/pool.ts";
import { WebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";

/** A webhook secret key of the test's own (the service's comes from its key file or configuration). */
export function testWebhookKeys(): WebhookSecretKeys {
  return new WebhookSecretKeys(randomBytes(32));
}

/**
 * Waits until `query` returns a row matching `predicate`: a short poll of the database (the
 * relay's mark is a row, and a row has no event to wait on). No deadline: vitest's test timeout
 * bounds it, and a failing test names the row it waited for.
 */
export async function untilRow<T>(db: Queryable, sql: string, params: unknown[], predicate: (rows: T[]) => boolean): Promise<T[]> {
  for (;;) {
    const { rows } = await db.query(sql, params);
    if (predicate(rows as T[])) return rows as T[];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function outboxStates(db: Queryable, tenantId: string): Promise<Array<{ message_key: string; state: string; attempts: number }>> {
  const { rows } = await db.query<{ message_key: string; state: string; attempts: number }>(
    "SELECT message_key, state, attempts FROM outbox_message WHERE tenant_id = $1 ORDER BY id", [tenantId]);
  return rows;
}
