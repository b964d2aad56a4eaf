import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placedMutatingRoutes } from "../../src/api/key-scopes.ts";
import { registeredRoutes } from "../../src/api/route-list.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { serviceRoutes } from "../../src/api/service-routes.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createApiKey } from "../../src/tenants/api-keys.ts";
import { ApiClient } from "../support/api-client.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Scopes on the routes (src/api/key-scopes.ts, decision 0097): every key reads, a change needs its scope. */
describe("API key scopes on the routes", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "scopes");
    await fund(world.client, "alice", "10.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  async function clientWith(name: string, scopes: string[]): Promise<ApiClient> {
    const created = await createApiKey(db.pool, world.tenantId, { name, scopes });
    if (!created.ok) throw new Error(created.error.message);
    return new ApiClient(world.api.baseUrl, created.value.apiKey);
  }
  const payments = async () => (await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM payment WHERE tenant_id = $1", [world.tenantId])).rows[0]?.n;

  it("places every mutating API-key route the server has, and no route it does not have", async () => {
    const app = buildHttpServer({
      pool: db.pool, logger: createLogger({ level: "silent" }),
      extraRoutes: serviceRoutes({ pool: db.pool, authorizer: undefined as never }),
    });
    await app.ready();
    const mutating = registeredRoutes(app)
      .filter((r) => MUTATING.has(r.method) && r.url.startsWith("/v1/") && !r.url.startsWith("/v1/ops/"))
      .map((r) => `${r.method} ${r.url}`);
    await app.close();
    expect([...new Set(mutating)].sort()).toEqual([...placedMutatingRoutes].sort());
  });

  it("lets a read_only key read and refuses it a payment with a typed 403, storing nothing", async () => {
    const reader = await clientWith("reader", ["read_only"]);
    expect((await reader.get("/v1/accounts/alice/balance")).status).toBe(200);
    const before = await payments();
    const refused = await reader.post("/v1/payments", paymentRequest(`ro-${randomUUID()}`, "1.00"),
      { "idempotency-key": randomUUID() });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "api_key_scope_forbidden", needed: "payments", scopes: ["read_only"] });
    expect(await payments()).toBe(before);
  });

  it("lets a read_only key page through the lists and read their items (issue 33 item 7)", async () => {
    const reader = await clientWith("browser", ["read_only"]);
    for (const list of ["/v1/payments", "/v1/refunds", "/v1/reviews", "/v1/transfers", "/v1/accounts"]) {
      const page = await reader.get(`${list}?limit=1`);
      expect(page.status, list).toBe(200);
      expect(page.json, list).toHaveProperty("next_cursor");
    }
    const [transfer] = (await reader.get("/v1/transfers")).json.data as Array<{ key: string }>;
    expect((await reader.get(`/v1/transfers/${encodeURIComponent(transfer?.key ?? "")}`)).status).toBe(200);
  });

  it("refuses a files key a payment and takes it from a payments key", async () => {
    const files = await clientWith("uploads", ["files"]);
    const paying = await clientWith("checkout", ["payments"]);
    const body = paymentRequest(`scoped-${randomUUID()}`, "1.00", { debtor_account: "alice", creditor_account: "bob" });
    const refused = await files.post("/v1/payments", body, { "idempotency-key": randomUUID() });
    expect(refused.json).toMatchObject({ code: "api_key_scope_forbidden", needed: "payments" });
    expect((await paying.post("/v1/payments", body, { "idempotency-key": randomUUID() })).status).toBe(201);
  });

  it("answers an unknown route 404 to any key, not 403", async () => {
    const reader = await clientWith("lost", ["read_only"]);
    expect((await reader.send("POST", "/v1/nowhere", {}, {})).status).toBe(404);
  });
});
