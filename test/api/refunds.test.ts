import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("POST /v1/refunds", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  let paymentId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "refunds");
    await fund(world.client, "alice", "50.00");
    paymentId = (await world.client.post("/v1/payments", paymentRequest("buy-1", "20.00"), { "idempotency-key": randomUUID() })).json.id;
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("refunds part of a payment by its id, moving the money back", async () => {
    const refund = await world.client.post("/v1/refunds", { client_reference: "rf-1", payment_id: paymentId, amount: "5.00" }, { "idempotency-key": randomUUID() });
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({ client_reference: "rf-1", payment_id: paymentId, status: "succeeded", amount: "5.00", currency: "USD" });
    expect((await world.client.get("/v1/accounts/alice/balance")).json.balance).toBe("35.00");
    expect((await world.client.get("/v1/accounts/bob/balance")).json.balance).toBe("15.00");
  });

  it("refunds by the payment's client_reference too", async () => {
    const refund = await world.client.post("/v1/refunds", { client_reference: "rf-2", payment_client_reference: "buy-1", amount: "1" }, { "idempotency-key": randomUUID() });
    expect(refund.status).toBe(201);
    expect(refund.json.amount).toBe("1.00");
  });

  it("refuses a refund beyond what remains of the payment", async () => {
    const refund = await world.client.post("/v1/refunds", { client_reference: "rf-3", payment_id: paymentId, amount: "14.01" }, { "idempotency-key": randomUUID() });
    expect(refund.status).toBe(422);
    expect(refund.json).toMatchObject({ code: "refund_exceeds_payment", refundable_minor: "1400" });
  });

  it("answers 404 for a refund of an unknown payment", async () => {
    const refund = await world.client.post("/v1/refunds", { client_reference: "rf-4", payment_id: "pay_nope", amount: "1.00" }, { "idempotency-key": randomUUID() });
    expect(refund.status).toBe(404);
    expect(refund.json.code).toBe("payment_not_found");
  });

  it("refuses to name the payment twice or not at all", async () => {
    const both = await world.client.post("/v1/refunds", { client_reference: "rf-5", payment_id: paymentId, payment_client_reference: "buy-1", amount: "1.00" }, { "idempotency-key": randomUUID() });
    expect(both.status).toBe(400);
  });

  it("never refunds one refund intent twice: a new key with a known client_reference gets 409", async () => {
    const again = await world.client.post("/v1/refunds", { client_reference: "rf-1", payment_id: paymentId, amount: "5.00" }, { "idempotency-key": randomUUID() });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe("duplicate_client_reference");
    expect((await world.client.get(`/v1/payments/${paymentId}`)).json.refunded_amount).toBe("6.00");
  });
});
