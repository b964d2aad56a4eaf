import { headers } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerPaymentRequestRoutes } from "../../src/api/routes/payment-requests.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { startNatsInbox, type NatsInbox } from "../../src/sources/nats-inbox.ts";
import { openEventStream, STREAM_NAME, type EventStream } from "../../src/outbox/nats/event-stream.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

// The real broker; absent, beforeAll throws and these tests FAIL (never skipped).
const NATS_URL = process.env.CLEARLINE_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("the inbox: payment instructions keyed by the id their source assigned", () => {
  let db: TestDatabase;
  let api: TestApi;
  let stream: EventStream;
  let inbox: NatsInbox;
  let tenant: { tenantId: string; apiKey: string };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool, [(app) => registerPaymentRequestRoutes(app, { pool: db.pool })]);
    tenant = await givenTenant(db.pool, "inbox");
    await givenAccounts(db.pool, tenant.tenantId, [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    await post(db.pool, transferOf(tenant.tenantId, "seed", "settlement", "alice", 100_000n));
    stream = await openEventStream(NATS_URL).catch((error: unknown) => {
      throw new Error(`NATS JetStream is not reachable at ${NATS_URL}: these tests did not run (${String(error)})`);
    });
    inbox = await startNatsInbox(db.pool, stream, createLogger({ level: "silent" }));
  });
  afterAll(async () => {
    await inbox?.stop();
    await stream?.close();
    await api.close();
    await db.drop();
  });

  const transfers = async (clientReference: string) =>
    (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key = $2", [tenant.tenantId, `api:${clientReference}:debit`])).rows[0]?.n;

  it("over HTTP, a redelivered message (same Message-Id) gets the stored outcome and applies nothing again", async () => {
    const client = new ApiClient(api.baseUrl, tenant.apiKey);
    const body = { client_reference: "inbox-http-1", amount: "3.00", currency: "USD", debtor_account: "alice", creditor_account: "bob" };
    const first = await client.post("/v1/payment-requests", body, { "message-id": "src-msg-1" });
    const again = await client.post("/v1/payment-requests", body, { "message-id": "src-msg-1" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(await transfers("inbox-http-1")).toBe(1);
  });

  it("over JetStream, an instruction is applied under its Nats-Msg-Id and its outcome published back under a key derived from it", async () => {
    const messageId = `src-${tenant.tenantId}-1`;
    const h = headers();
    h.set("Nats-Msg-Id", messageId);
    await stream.jetStream.publish(`clearline.${tenant.tenantId}.payment-requests`,
      JSON.stringify({ client_reference: "inbox-nats-1", amount: "4.00", currency: "USD", debtor_account: "alice", creditor_account: "bob" }), { headers: h, msgID: messageId });
    const outcomeSubject = `clearline.${tenant.tenantId}.payment-requests.outcome`;
    let outcome = null;
    while (outcome === null) {
      outcome = await stream.manager.streams.getMessage(STREAM_NAME, { last_by_subj: outcomeSubject }).catch(() => null);
      if (outcome === null) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(outcome.header.get("Nats-Msg-Id")).toBe(`${messageId}:outcome`);
    expect(outcome.json()).toMatchObject({ messageId, status: 201, replayed: false, body: { client_reference: "inbox-nats-1", status: "succeeded" } });
    expect(await transfers("inbox-nats-1")).toBe(1);
    const { rows } = await db.pool.query("SELECT state FROM idempotency_record WHERE tenant_id = $1 AND endpoint = 'inbox nats payment-requests' AND idem_key = $2", [tenant.tenantId, messageId]);
    expect(rows).toEqual([{ state: "completed" }]);
  });
});
