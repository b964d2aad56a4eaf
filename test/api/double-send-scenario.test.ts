import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { doubleSend } from "../support/api-client.ts";
import { givenApiWorld, ledgerCounts, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

/**
 * One fixed scenario with exact expected balances and entry counts. Under CLEARLINE_DOUBLE_SEND=1
 * every mutating request in it is sent twice; the expected figures do not change, which is the
 * point: the double-send run must end with the same ledger as the normal run.
 */
describe(`a fixed payment scenario${doubleSend ? " (every mutating request sent twice)" : ""}`, () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "scenario");
    const c = world.client;
    await c.post("/v1/payments", { ...paymentRequest("s-fund", "100.00"), debtor_account: "settlement", creditor_account: "alice" }, { "idempotency-key": "s-k1" });
    await c.post("/v1/payments", paymentRequest("s-pay-1", "10.00"), { "idempotency-key": "s-k2" });
    await c.post("/v1/payments", paymentRequest("s-pay-2", "20.50"), { "idempotency-key": "s-k3" });
    await c.post("/v1/payments", paymentRequest("s-pay-3", "500.00"), { "idempotency-key": "s-k4" });         // declined: insufficient funds
    await c.post("/v1/payments", paymentRequest("s-pay-1", "10.00"), { "idempotency-key": "s-k5" });          // duplicate client_reference
    await c.post("/v1/payments", paymentRequest("s-pay-2", "99.99"), { "idempotency-key": "s-k3" });          // key reuse
    await c.post("/v1/refunds", { client_reference: "s-ref-1", payment_client_reference: "s-pay-2", amount: "5.25" }, { "idempotency-key": "s-k6" });
    await c.post("/v1/refunds", { client_reference: "s-ref-2", payment_client_reference: "s-pay-2", amount: "100.00" }, { "idempotency-key": "s-k7" }); // exceeds
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("ends with exact balances", async () => {
    const balance = async (id: string) => (await world.client.get(`/v1/accounts/${id}/balance`)).json.balance;
    expect(await balance("alice")).toBe("74.75");
    expect(await balance("bob")).toBe("25.25");
    expect(await balance("settlement")).toBe("100.00"); // debit-normal: money held at the settlement bank
  });

  it("ends with exactly four transfers of two entries each", async () => {
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual({ transfers: 4, entries: 8 });
  });
});
