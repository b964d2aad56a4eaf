import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../support/api-client.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("tenants", () => {
  let db: TestDatabase;
  let a: ApiWorld;
  let b: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    a = await givenApiWorld(db.pool, "tenant-a");
    b = await givenApiWorld(db.pool, "tenant-b");
    await fund(a.client, "alice", "10.00");
    await fund(b.client, "alice", "10.00");
  });
  afterAll(async () => {
    await a.api.close();
    await b.api.close();
    await db.drop();
  });

  it("keeps the same Idempotency-Key independent per tenant: B never sees A's stored response", async () => {
    const fromA = await a.client.post("/v1/payments", paymentRequest("same-ref", "1.00"), { "idempotency-key": "shared-key" });
    const fromB = await b.client.post("/v1/payments", paymentRequest("same-ref", "2.00"), { "idempotency-key": "shared-key" });
    expect(fromA.status).toBe(201);
    expect(fromB.status).toBe(201);
    expect(fromB.headers.get("idempotent-replayed")).toBeNull();
    expect(fromB.json.amount).toBe("2.00");
    expect(fromB.json.id).not.toBe(fromA.json.id);
  });

  it("does not let one tenant read another's payment", async () => {
    const fromA = await a.client.post("/v1/payments", paymentRequest("a-only", "1.00"), { "idempotency-key": "a-only" });
    expect((await b.client.get(`/v1/payments/${fromA.json.id}`)).status).toBe(404);
  });

  it("refuses a request without an API key or with an unknown one with 401", async () => {
    expect((await new ApiClient(a.api.baseUrl, undefined).get("/v1/accounts/alice/balance")).status).toBe(401);
    const wrong = await new ApiClient(a.api.baseUrl, "cl_not-a-key").get("/v1/accounts/alice/balance");
    expect(wrong.status).toBe(401);
    expect(wrong.json.code).toBe("unauthorized");
  });

  it("stores only a hash of the API key", async () => {
    const { rows } = await db.pool.query("SELECT api_key_hash FROM tenant WHERE tenant_id = $1", [a.tenantId]);
    expect(rows[0].api_key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].api_key_hash).not.toContain(a.apiKey);
  });
});
