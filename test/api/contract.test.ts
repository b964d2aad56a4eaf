import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("the published contract", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "contract");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("serves an OpenAPI 3 document naming the Idempotency-Key on every idempotent endpoint", async () => {
    const doc = (await world.client.get("/openapi.json")).json;
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ["/v1/payments", "/v1/refunds", "/v1/reviews/{id}/decision"]) {
      expect(doc.paths[path].post.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
    }
    expect(doc.paths["/v1/payments"].post.requestBody.content["application/json"].schema.required).toEqual(
      expect.arrayContaining(["client_reference", "amount", "currency", "debtor_account", "creditor_account"]),
    );
  });

  it("documents the idempotency contract in docs/api/idempotency.md", () => {
    const path = new URL("../../docs/api/idempotency.md", import.meta.url);
    expect(existsSync(path)).toBe(true);
    const text = readFileSync(path, "utf8");
    for (const topic of ["Idempotency-Key", "7 days", "422", "409", "Retry-After", "client_reference", "Idempotent-Replayed"]) expect(text).toContain(topic);
  });

  it("answers errors as application/problem+json with a stable code", async () => {
    const response = await world.client.post("/v1/payments", "{not json", { "idempotency-key": randomUUID() });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(response.json.code).toBe("request_invalid");
  });

  it("counts mutating requests without a key so their share can be watched", async () => {
    await world.client.post("/v1/payments", paymentRequest("no-key"));
    const metrics = await (await fetch(`${world.api.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/clearline_http_mutating_requests_total\{endpoint="POST \/v1\/payments",idempotency_key="missing"\} [1-9]/);
  });
});
