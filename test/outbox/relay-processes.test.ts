import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { outboxFaultPoints, type OutboxFaultPoint } from "../../src/outbox/fault-points.ts";
import { enqueueEvents } from "../../src/outbox/outbox-store.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { givenTenant } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { untilRow } from "../support/outbox.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { WebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";

// The key every serve process here seals and opens webhook secrets with (CLEARLINE_WEBHOOK_SECRET_KEY).
const webhookKeyHex = randomBytes(32).toString("hex");
const webhookKeys = new WebhookSecretKeys(Buffer.from(webhookKeyHex, "hex"));

// Short leases, so the healthy relay takes a killed relay's rows over within seconds.
const LEASE_MS = "2000";

describe("outbox relays in real `clearline serve` processes", () => {
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  const secret = newSigningSecret();

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startWebhookReceiver(() => secret);
  });
  afterAll(async () => {
    await receiver.close();
    await db.drop();
  });

  async function givenEvents(tenantName: string, count: number): Promise<{ tenantId: string; keys: string[] }> {
    const { tenantId } = await givenTenant(db.pool, tenantName);
    await addWebhookEndpoint(db.pool, tenantId, receiver.url, ["test.event"], secret, webhookKeys);
    const keys = Array.from({ length: count }, (_, i) => `${tenantName}:${i}:done`);
    await withTransaction(db.pool, (tx) => enqueueEvents(tx, keys.map((key) => ({ tenantId, eventType: "test.event", eventKey: key, data: { key } })), { nats: false }));
    return { tenantId, keys };
  }

  const allDelivered = (tenantId: string, count: number) => untilRow(db.pool,
    "SELECT count(*)::int AS n FROM outbox_message WHERE tenant_id = $1 AND state = 'delivered'", [tenantId], (rows: Array<{ n: number }>) => rows[0]?.n === count);

  for (const point of outboxFaultPoints) {
    it(`every message is delivered and each key's effect is seen once when the relay is killed ${point.replace("outbox_", "").replace("_", " ")}`, async () => {
      const { tenantId, keys } = await givenEvents(`kill_${point}`, 5);
      const doomed = await startServeProcess({ CLEARLINE_WEBHOOK_SECRET_KEY: webhookKeyHex, DATABASE_URL: db.url, CLEARLINE_FAULT_POINT: point satisfies OutboxFaultPoint, CLEARLINE_OUTBOX_LEASE_MS: LEASE_MS });
      expect(await doomed.exited).toBeNull(); // killed by the fault point's SIGKILL
      await doomed.stop();
      // A relay runs limits.outbox.relayPassesInFlight passes at once: the pass that reached the
      // fault point killed the process, another may have been anywhere in its own pass.
      const sentBeforeKill = new Map([...receiver.posts].filter(([key]) => keys.includes(key)));
      if (point === "outbox_after_lease") expect(sentBeforeKill.size).toBeLessThan(keys.length);
      else expect(sentBeforeKill.size).toBeGreaterThan(0);

      const healthy = await startServeProcess({ CLEARLINE_WEBHOOK_SECRET_KEY: webhookKeyHex, DATABASE_URL: db.url, CLEARLINE_OUTBOX_LEASE_MS: LEASE_MS });
      try {
        await allDelivered(tenantId, keys.length);
      } finally {
        await healthy.stop();
      }
      for (const key of keys) expect(receiver.effects.filter((e) => e.id === key)).toHaveLength(1);
      // A key sent and not marked before the kill is sent again under the same Webhook-Id (the
      // receiver deduped it); a key marked delivered is never sent again; none more than twice.
      for (const key of keys) expect(receiver.posts.get(key)).toBeGreaterThanOrEqual(1);
      for (const key of keys) expect(receiver.posts.get(key)).toBeLessThanOrEqual(2);
      const resent = keys.filter((key) => receiver.posts.get(key) === 2);
      if (point === "outbox_after_send") expect(resent.length).toBeGreaterThan(0);
      if (point === "outbox_after_lease") expect(resent.every((key) => sentBeforeKill.has(key))).toBe(true);
    });
  }

  it("two serve processes relaying from one database deliver every message to completion once, and lose none", async () => {
    const { tenantId, keys } = await givenEvents("two_relays", 400);
    const first = await startServeProcess({ CLEARLINE_WEBHOOK_SECRET_KEY: webhookKeyHex, DATABASE_URL: db.url });
    const second = await startServeProcess({ CLEARLINE_WEBHOOK_SECRET_KEY: webhookKeyHex, DATABASE_URL: db.url });
    try {
      await allDelivered(tenantId, keys.length);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    for (const key of keys) expect(receiver.posts.get(key), key).toBe(1);
    const { rows } = await db.pool.query<{ attempts: number }>("SELECT max(attempts) AS attempts FROM outbox_message WHERE tenant_id = $1", [tenantId]);
    expect(rows[0]?.attempts).toBe(1); // no row was leased twice
  });
});
