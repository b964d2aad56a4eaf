import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("concurrent requests", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 20 });
    world = await givenApiWorld(db.pool, "concurrency");
    await fund(world.client, "alice", "1000.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("applies 64 concurrent POSTs with one key exactly once; every answer is the 201 or a 409, never a 5xx", async () => {
    const key = randomUUID();
    // Single-send: the subject here is the race itself.
    const client = world.client.singleSend();
    const responses = await Promise.all(Array.from({ length: 64 }, () => client.post("/v1/payments", paymentRequest("race-1", "7.00"), { "idempotency-key": key })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    for (const busy of responses.filter((r) => r.status === 409)) {
      expect(busy.json.code).toBe("request_in_progress");
      expect(busy.headers.get("retry-after")).toBe("1");
    }
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key = 'api:race-1:debit'", [world.tenantId]);
    expect(rows[0].n).toBe(1);
    expect((await world.client.get("/v1/accounts/bob/balance")).json.balance).toBe("7.00");
  });

  it("never lets refunds of one payment exceed it, however many run at once", async () => {
    const payment = await world.client.post("/v1/payments", paymentRequest("refunded-1", "10.00"), { "idempotency-key": randomUUID() });
    expect(payment.status).toBe(201);
    const client = world.client.singleSend();
    const refunds = await Promise.all(Array.from({ length: 12 }, (_, i) => client.post("/v1/refunds", {
      client_reference: `refund-${i}`, payment_id: payment.json.id, amount: "3.00",
    }, { "idempotency-key": randomUUID() })));
    const succeeded = refunds.filter((r) => r.status === 201);
    expect(succeeded).toHaveLength(3);
    expect(refunds.filter((r) => r.status !== 201).every((r) => r.json.code === "refund_exceeds_payment")).toBe(true);
    const after = await world.client.get(`/v1/payments/${payment.json.id}`);
    expect(after.json.refunded_amount).toBe("9.00");
  });
});
