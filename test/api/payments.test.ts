import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, ledgerCounts, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("POST /v1/payments", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "payments");
    await fund(world.client, "alice", "100.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("creates one balanced transfer and answers 201 with the payment resource", async () => {
    const response = await world.client.post("/v1/payments", paymentRequest("order-1", "10.00"), { "idempotency-key": randomUUID() });
    expect(response.status).toBe(201);
    expect(response.json).toMatchObject({ client_reference: "order-1", status: "succeeded", amount: "10.00", currency: "USD", debtor_account: "alice", creditor_account: "bob" });
    expect(response.json.id).toMatch(/^pay_[0-9a-f]{24}$/);
    const bob = await world.client.get("/v1/accounts/bob/balance");
    expect(bob.json).toEqual({ account: "bob", currency: "USD", balance: "10.00" });
  });

  it("replays the stored response byte for byte with Idempotent-Replayed for the same key and request", async () => {
    const key = randomUUID();
    const first = await world.client.post("/v1/payments", paymentRequest("order-2", "1.50"), { "idempotency-key": key });
    const before = await ledgerCounts(db.pool, world.tenantId);
    const again = await world.client.singleSend().post("/v1/payments", paymentRequest("order-2", "1.5"), { "idempotency-key": key });
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
  });

  it("answers 422 idempotency_key_reuse naming the differing field when the key comes back with another amount, and changes nothing", async () => {
    const key = randomUUID();
    await world.client.post("/v1/payments", paymentRequest("order-3", "2.00"), { "idempotency-key": key });
    const before = await ledgerCounts(db.pool, world.tenantId);
    const reused = await world.client.post("/v1/payments", paymentRequest("order-3", "3.00"), { "idempotency-key": key });
    expect(reused.status).toBe(422);
    expect(reused.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(reused.json).toMatchObject({ code: "idempotency_key_reuse", differing_fields: ["amount_minor"] });
    expect(reused.text).not.toContain("pay_");
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
  });

  it("refuses a mutating request without an Idempotency-Key with 400 and stores nothing", async () => {
    const response = await world.client.post("/v1/payments", paymentRequest("order-4"));
    expect(response.status).toBe(400);
    expect(response.json.code).toBe("idempotency_key_missing");
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM payment WHERE client_reference = 'order-4'");
    expect(rows[0].n).toBe(0);
  });

  it("accepts the draft's quoted key form as the same key", async () => {
    const key = randomUUID();
    const first = await world.client.post("/v1/payments", paymentRequest("order-5"), { "idempotency-key": key });
    const quoted = await world.client.singleSend().post("/v1/payments", paymentRequest("order-5"), { "idempotency-key": `"${key}"` });
    expect(quoted.headers.get("idempotent-replayed")).toBe("true");
    expect(quoted.text).toBe(first.text);
  });

  it("refuses a key that is too long or holds invisible characters", async () => {
    expect((await world.client.post("/v1/payments", paymentRequest("order-6"), { "idempotency-key": "k".repeat(256) })).json.code).toBe("idempotency_key_invalid");
    expect((await world.client.post("/v1/payments", paymentRequest("order-6"), { "idempotency-key": "has space" })).json.code).toBe("idempotency_key_invalid");
    expect((await world.client.post("/v1/payments", paymentRequest("order-6"), { "idempotency-key": "k".repeat(255) })).status).toBe(201);
  });

  it("refuses two Idempotency-Key headers with 400", async () => {
    const response = await world.client.post("/v1/payments", paymentRequest("order-7"), { "idempotency-key": "a, b" });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe("idempotency_key_multiple");
  });

  it("does not store a validation 400: the same key then works with a valid body", async () => {
    const key = randomUUID();
    const invalid = await world.client.post("/v1/payments", paymentRequest("order-8", "1.234"), { "idempotency-key": key });
    expect(invalid.status).toBe(400);
    expect(invalid.json.code).toBe("request_invalid");
    expect((await world.client.post("/v1/payments", paymentRequest("order-8", "1.23"), { "idempotency-key": key })).status).toBe(201);
  });

  it("refuses an amount sent as a JSON number, which would have passed through a float", async () => {
    const response = await world.client.post("/v1/payments", { ...paymentRequest("order-9"), amount: 10.1 }, { "idempotency-key": randomUUID() });
    expect(response.status).toBe(400);
  });

  it("stores and replays an insufficient-funds refusal, and the declined intent is visible by client_reference", async () => {
    const key = randomUUID();
    const declined = await world.client.post("/v1/payments", paymentRequest("order-10", "100000.00"), { "idempotency-key": key });
    expect(declined.status).toBe(422);
    expect(declined.json.code).toBe("insufficient_funds");
    const replay = await world.client.singleSend().post("/v1/payments", paymentRequest("order-10", "100000.00"), { "idempotency-key": key });
    expect(replay.text).toBe(declined.text);
    const status = await world.client.get("/v1/payments?client_reference=order-10");
    expect(status.json).toMatchObject({ status: "declined", decline_code: "insufficient_funds" });
  });

  it("never posts an intent twice: a new key with a known client_reference gets 409 pointing at the payment", async () => {
    const first = await world.client.post("/v1/payments", paymentRequest("order-11"), { "idempotency-key": randomUUID() });
    const before = await ledgerCounts(db.pool, world.tenantId);
    const second = await world.client.post("/v1/payments", paymentRequest("order-11"), { "idempotency-key": randomUUID() });
    expect(second.status).toBe(409);
    expect(second.json).toMatchObject({ code: "duplicate_client_reference", payment_id: first.json.id });
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
  });

  it("answers the status of an intent by client_reference and by id", async () => {
    const created = await world.client.post("/v1/payments", paymentRequest("order-12", "0.01"), { "idempotency-key": randomUUID() });
    expect((await world.client.get("/v1/payments?client_reference=order-12")).json).toEqual(created.json);
    expect((await world.client.get(`/v1/payments/${created.json.id}`)).json).toEqual(created.json);
    expect((await world.client.get("/v1/payments?client_reference=never-sent")).status).toBe(404);
  });

  it("answers 404 account_not_found for an unknown account without posting", async () => {
    const response = await world.client.post("/v1/payments", paymentRequest("order-13", "1.00", { creditor_account: "nobody" }), { "idempotency-key": randomUUID() });
    expect(response.status).toBe(404);
    expect(response.json.code).toBe("account_not_found");
  });

  it("refuses a payment from an account to itself with 422 payment_same_account, posting and storing nothing", async () => {
    const before = await ledgerCounts(db.pool, world.tenantId);
    const key = randomUUID();
    const response = await world.client.post("/v1/payments", paymentRequest("self-1", "5.00", { debtor_account: "alice", creditor_account: "alice" }), { "idempotency-key": key });
    expect(response.status).toBe(422);
    expect(response.json).toMatchObject({ code: "payment_same_account", errors: [{ field: "creditor_account" }] });
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM payment WHERE tenant_id = $1 AND client_reference = 'self-1'", [world.tenantId]);
    expect(rows[0].n).toBe(0);
    // Nothing was claimed: the intent and the key still work for a payment between two accounts.
    expect((await world.client.post("/v1/payments", paymentRequest("self-1", "5.00"), { "idempotency-key": key })).status).toBe(201);
  });

  it("leaves a dedup record for every repeat it did not apply", async () => {
    const { rows } = await db.pool.query("SELECT reason, count(*)::int AS n FROM dedup_event WHERE tenant_id = $1 GROUP BY reason", [world.tenantId]);
    const reasons = Object.fromEntries(rows.map((r) => [r.reason, r.n]));
    expect(reasons.replayed).toBeGreaterThanOrEqual(3);
    expect(reasons.key_reuse).toBeGreaterThanOrEqual(1);
    expect(reasons.duplicate).toBeGreaterThanOrEqual(1);
  });
});
