import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { registry } from "../../src/observability/metrics.ts";
import { enqueueEvent, retryDead } from "../../src/outbox/outbox-store.ts";
import { defaultRelaySettings, startRelay, type Relay } from "../../src/outbox/relay.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { webhookDeliverer } from "../../src/outbox/webhooks/webhook-deliverer.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { outboxStates, testWebhookKeys, untilRow } from "../support/outbox.ts";
import { givenOperator, signIn } from "../support/ops-client.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { capturedLogger } from "../gateway/support.ts";

const webhookKeys = testWebhookKeys();

describe("webhooks delivered by the outbox relay", () => {
  let db: TestDatabase;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let tenant: { tenantId: string; apiKey: string };
  let relay: Relay | undefined;
  const secret = newSigningSecret();
  const logger = createLogger({ level: "silent" });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
    receiver = await startWebhookReceiver(() => secret);
    tenant = await givenTenant(db.pool, "hooks");
    await givenAccounts(db.pool, tenant.tenantId, [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    await post(db.pool, transferOf(tenant.tenantId, "seed", "settlement", "alice", 100_000n));
    await addWebhookEndpoint(db.pool, tenant.tenantId, receiver.url, ["payment.applied", "test.event"], secret, webhookKeys);
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });
  afterAll(async () => {
    await api.close();
    await receiver.close();
    await db.drop();
  });

  const event = (key: string) => withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId: tenant.tenantId, eventType: "test.event", eventKey: key, data: { key } }, { nats: false }));

  it("a payment applied over HTTP reaches the subscribed endpoint, signed, with the key derived from its intent as Webhook-Id", async () => {
    const created = await new ApiClient(api.baseUrl, tenant.apiKey).post("/v1/payments",
      { client_reference: "hook-1", amount: "5.00", currency: "USD", debtor_account: "alice", creditor_account: "bob" }, { "idempotency-key": "k-hook-1" });
    expect(created.status).toBe(201);
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger);
    const id = "api:hook-1:debit:applied";
    await receiver.until(() => receiver.posts.has(id));
    const effect = receiver.effects.find((e) => e.id === id);
    expect(effect?.type).toBe("payment.applied");
    // The versioned envelope (docs/decisions/0107), the payment as GET /v1/payments/{id} shows it.
    expect(effect?.body).toMatchObject({
      event_id: id, event_type: "payment.applied", event_version: 1, tenant_id: tenant.tenantId,
      type: "payment.applied", data: { client_reference: "hook-1", amount: "5.00", currency: "USD", status: "succeeded" },
    });
    const shown = await new ApiClient(api.baseUrl, tenant.apiKey).get("/v1/payments?client_reference=hook-1");
    expect((effect?.body as { data: unknown }).data).toEqual(shown.json);
    expect(receiver.refusedSignatures).toBe(0);
    await untilRow(db.pool, "SELECT state FROM outbox_message WHERE tenant_id = $1 AND message_key = $2", [tenant.tenantId, id], (rows: Array<{ state: string }>) => rows[0]?.state === "delivered");
  });

  it("an event stored before the versioned envelope (camelCase data) is sent as it was stored, marked event_version 0 (docs/decisions/0107)", async () => {
    // As a process of the release before 0107 wrote payment.applied: the Payment object itself.
    const legacy = { paymentId: "pay_old", clientReference: "old-1", amountMinor: "500", currency: "USD", status: "succeeded" };
    await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId: tenant.tenantId, eventType: "payment.applied", eventKey: "api:old-1:debit:applied", data: legacy }, { nats: false }));
    await event("current-1");
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger);
    await receiver.until(() => receiver.posts.has("api:old-1:debit:applied") && receiver.posts.has("current-1"));
    const old = receiver.effects.find((e) => e.id === "api:old-1:debit:applied");
    expect(old?.body).toMatchObject({ event_id: "api:old-1:debit:applied", event_type: "payment.applied", event_version: 0, type: "payment.applied" });
    expect((old?.body as { data: unknown }).data).toEqual(legacy);
    const current = receiver.effects.find((e) => e.id === "current-1");
    expect(current?.body).toMatchObject({ event_version: 1, data: { key: "current-1" } });
  });

  it("the same event enqueued twice (a replayed decision) is one row and one delivery", async () => {
    await event("twice");
    await event("twice");
    expect((await outboxStates(db.pool, tenant.tenantId)).filter((r) => r.message_key === "twice")).toHaveLength(1);
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger);
    await untilRow(db.pool, "SELECT state FROM outbox_message WHERE tenant_id = $1 AND message_key = 'twice'", [tenant.tenantId], (rows: Array<{ state: string }>) => rows[0]?.state === "delivered");
    expect(receiver.posts.get("twice")).toBe(1);
  });

  it("a refused delivery is retried with backoff under the same Webhook-Id until the receiver takes it", async () => {
    receiver.failNext(2, 503);
    await event("retried");
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger, { ...defaultRelaySettings, idlePollMs: 50 });
    const [row] = await untilRow(db.pool, "SELECT state, attempts FROM outbox_message WHERE tenant_id = $1 AND message_key = 'retried'", [tenant.tenantId],
      (rows: Array<{ state: string; attempts: number }>) => rows[0]?.state === "delivered");
    expect(row?.attempts).toBe(3);
    expect(receiver.posts.get("retried")).toBe(3);
    expect(receiver.effects.filter((e) => e.id === "retried")).toHaveLength(1);
  });

  it("a row is dead-lettered at the attempt bound, and an operator's retry delivers it", async () => {
    receiver.failNext(2, 500);
    await event("dead");
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger, { ...defaultRelaySettings, attemptsMax: 2, idlePollMs: 50 });
    const [dead] = await untilRow(db.pool, "SELECT id::text, state FROM outbox_message WHERE tenant_id = $1 AND message_key = 'dead'", [tenant.tenantId],
      (rows: Array<{ id: string; state: string }>) => rows[0]?.state === "dead");
    expect(receiver.effects.some((e) => e.id === "dead")).toBe(false);
    expect(await retryDead(db.pool, tenant.tenantId, dead?.id ?? "")).toBe(true);
    await receiver.until(() => receiver.effects.some((e) => e.id === "dead"));
    expect(receiver.posts.get("dead")).toBe(3);
  });

  it("an endpoint that answers 410 Gone is disabled once, says so in the operations API, and its other events are held, not dead-lettered one by one (regression: 26 dead letters in one try)", async () => {
    const gone = await startWebhookReceiver(() => secret);
    try {
      gone.failNext(1_000, 410);
      const endpoint = await addWebhookEndpoint(db.pool, tenant.tenantId, gone.url, ["gone.event"], secret, webhookKeys);
      for (let i = 0; i < 26; i++) {
        await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId: tenant.tenantId, eventType: "gone.event", eventKey: `gone:${i}`, data: { i } }, { nats: false }));
      }
      const { logger: capturing, lines } = capturedLogger();
      relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys, logger: capturing })], capturing, { ...defaultRelaySettings, idlePollMs: 50 });
      const destination = `webhook:${endpoint.endpointId}`;
      const settled = await untilRow(db.pool, "SELECT state, count(*)::int AS n FROM outbox_message WHERE tenant_id = $1 AND destination = $2 GROUP BY state",
        [tenant.tenantId, destination], (rows: Array<{ state: string; n: number }>) => !rows.some((r) => r.state === "pending" || r.state === "delivering"));
      expect(settled).toEqual([{ state: "held", n: 26 }]);
      const messages = lines.map((line) => String((JSON.parse(line) as { msg?: string }).msg));
      expect(messages.filter((msg) => msg.startsWith("webhook endpoint disabled"))).toHaveLength(1);
      // Decided after the disable: not written for the endpoint at all.
      await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId: tenant.tenantId, eventType: "gone.event", eventKey: "gone:late", data: {} }, { nats: false }));
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM outbox_message WHERE tenant_id = $1 AND destination = $2", [tenant.tenantId, destination]);
      expect(rows[0].n).toBe(26);
      const operator = await signIn(api.baseUrl, "hooks", "otto", await givenOperator(db.pool, tenant.tenantId, "otto", "viewer"));
      const listed = await operator.get("/v1/ops/webhooks");
      expect(listed.status).toBe(200);
      expect(listed.json.webhooks).toContainEqual(expect.objectContaining({
        endpoint_id: endpoint.endpointId, status: "disabled", held_events: 26, disabled_reason: expect.stringMatching(/410 Gone/),
      }));
      expect(listed.text).not.toContain(secret);
    } finally {
      await gone.close();
    }
  });

  it("deliveries by outcome and the age of the oldest undelivered row are metrics", async () => {
    const delivered = async () => (await registry.getSingleMetric("clearline_outbox_deliveries_total")?.get())?.values.find((v) => v.labels.outcome === "delivered")?.value ?? 0;
    const before = await delivered();
    await event("metered");
    await db.pool.query("UPDATE outbox_message SET created_at = now() - interval '1 hour' WHERE tenant_id = $1 AND message_key = 'metered'", [tenant.tenantId]);
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys: webhookKeys })], logger, { ...defaultRelaySettings, idlePollMs: 50 });
    await untilRow(db.pool, "SELECT state FROM outbox_message WHERE tenant_id = $1 AND message_key = 'metered'", [tenant.tenantId], (rows: Array<{ state: string }>) => rows[0]?.state === "delivered");
    expect(await delivered()).toBeGreaterThan(before);
    const text = await registry.metrics();
    expect(text).toMatch(/clearline_outbox_oldest_undelivered_age_seconds \d/);
  });
});
