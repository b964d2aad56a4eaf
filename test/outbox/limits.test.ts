import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { OutboxPermanentError, type OutboxMessage } from "../../src/outbox/deliverer.ts";
import { enqueueEvents, leaseDue, markDeliveredAndLease } from "../../src/outbox/outbox-store.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { webhookBody, webhookDeliverer } from "../../src/outbox/webhooks/webhook-deliverer.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { testWebhookKeys } from "../support/outbox.ts";

const webhookKeys = testWebhookKeys();

// Each outbox bound fed one past it.
describe("the outbox's bounds", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("a lease takes at most relayBatchRowsMax rows, alone or with a mark: the row past the bound waits for the next lease", async () => {
    const batchRowsMax = limits.outbox.relayBatchRowsMax;
    const tenantId = "bound-batch";
    const endpoint = await addWebhookEndpoint(db.pool, tenantId, "http://127.0.0.1:9/hooks", ["test.event"], newSigningSecret(), webhookKeys);
    const events = Array.from({ length: 2 * batchRowsMax + 1 }, (_, i) => ({ tenantId, eventType: "test.event", eventKey: `bound:${i}`, data: { i } }));
    await withTransaction(db.pool, (tx) => enqueueEvents(tx, events, { nats: false }));
    const first = await leaseDue(db.pool, "bound-relay", batchRowsMax, limits.outbox.leaseMs);
    expect(first).toHaveLength(batchRowsMax);
    expect(first.every((m) => m.destination === `webhook:${endpoint.endpointId}`)).toBe(true);
    const second = await markDeliveredAndLease(db.pool, first, "bound-relay", batchRowsMax, limits.outbox.leaseMs);
    expect(second).toMatchObject({ marked: batchRowsMax, next: { length: batchRowsMax } });
    const third = await markDeliveredAndLease(db.pool, second.next, "bound-relay", batchRowsMax, limits.outbox.leaseMs);
    expect(third).toMatchObject({ marked: batchRowsMax, next: { length: 1 } });
  });

  it("webhook add refuses webhookEventTypesMax + 1 event types with exit 2 and stores nothing", async () => {
    const env = { DATABASE_URL: db.url };
    expect((await runCli(["tenant", "add", "bound-events"], env)).exitCode).toBe(0);
    const types = Array.from({ length: limits.outbox.webhookEventTypesMax + 1 }, (_, i) => `event.type${i}`).join(",");
    const refused = await runCli(["webhook", "add", "--tenant", "bound-events", "http://127.0.0.1:9/hooks", "--events", types], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("WEBHOOK_EVENTS_INVALID");
    const { rows } = await db.pool.query("SELECT 1 FROM webhook_endpoint w JOIN tenant t ON t.tenant_id = w.tenant_id WHERE t.name = 'bound-events'");
    expect(rows).toEqual([]);
  });

  it("webhook add refuses the endpoint past webhookEndpointsPerTenantMax with exit 2 and stores nothing", async () => {
    const env = { DATABASE_URL: db.url };
    expect((await runCli(["tenant", "add", "bound-endpoints"], env)).exitCode).toBe(0);
    const { rows: [tenant] } = await db.pool.query<{ tenant_id: string }>("SELECT tenant_id FROM tenant WHERE name = 'bound-endpoints'");
    const tenantId = tenant?.tenant_id ?? "";
    for (let i = 0; i < limits.outbox.webhookEndpointsPerTenantMax; i += 1) {
      await addWebhookEndpoint(db.pool, tenantId, `http://127.0.0.1:9/hooks/${i}`, ["test.event"], newSigningSecret(), webhookKeys);
    }
    const refused = await runCli(["webhook", "add", "--tenant", "bound-endpoints", "http://127.0.0.1:9/one-more", "--events", "test.event"], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("WEBHOOK_ENDPOINTS_FULL");
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_endpoint WHERE tenant_id = $1", [tenantId]);
    expect(rows).toEqual([{ n: limits.outbox.webhookEndpointsPerTenantMax }]);
  });

  it("a webhook body of webhookBodyBytesMax + 1 bytes is dead-lettered as WEBHOOK_BODY_TOO_LARGE, not sent", async () => {
    const tenantId = "bound-body";
    const endpoint = await addWebhookEndpoint(db.pool, tenantId, "http://127.0.0.1:9/hooks", ["test.event"], newSigningSecret(), webhookKeys);
    const message: OutboxMessage = {
      tenantId, id: "1", destination: `webhook:${endpoint.endpointId}`, messageType: "test.event", messageKey: "bound:body",
      payload: { pad: "" }, attempts: 1, createdAt: new Date("2026-12-03T00:00:00.000Z"),
    };
    message.payload = { pad: "x".repeat(limits.outbox.webhookBodyBytesMax + 1 - Buffer.byteLength(webhookBody(message))) };
    expect(Buffer.byteLength(webhookBody(message))).toBe(limits.outbox.webhookBodyBytesMax + 1);
    const refusal = await webhookDeliverer(db.pool, { keys: webhookKeys }).deliver(message, new AbortController().signal).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(OutboxPermanentError);
    expect((refusal as OutboxPermanentError).code).toBe("WEBHOOK_BODY_TOO_LARGE");
  });
});
