import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpServer } from "../../src/api/server.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { ApiClient } from "../support/api-client.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, ledgerCounts, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("text PostgreSQL cannot store, on every HTTP route", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "text-fields");
    await fund(world.client, "alice", "100.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("answers 422 text_character_invalid naming description for a NUL, stores nothing, and answers the same on a retry", async () => {
    const key = randomUUID();
    const before = await ledgerCounts(db.pool, world.tenantId);
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await world.client.singleSend().post("/v1/payments", paymentRequest("nul-1", "1.00", { description: "rent\u0000" }), { "idempotency-key": key });
      expect(response.status).toBe(422);
      expect(response.json).toMatchObject({ code: "text_character_invalid", errors: [{ field: "description", in: "body", code: "TEXT_CHARACTER_INVALID" }] });
      expect(response.json.detail).toMatch(/description holds a NUL character \(U\+0000\) at offset 4/);
    }
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM idempotency_record WHERE tenant_id = $1 AND idem_key = $2", [world.tenantId, key]);
    expect(rows[0].n).toBe(0);
  });

  it("answers 422 for an unpaired surrogate sent as a JSON escape", async () => {
    const body = JSON.stringify(paymentRequest("surrogate-1", "1.00", { description: "x\ud800" }));
    expect(body).toContain("\\ud800");
    const response = await world.client.singleSend().post("/v1/payments", body, { "idempotency-key": randomUUID() });
    expect(response.status).toBe(422);
    expect(response.json.errors).toEqual([expect.objectContaining({ field: "description", in: "body" })]);
    expect(response.json.detail).toMatch(/unpaired UTF-16 surrogate at offset 1/);
  });

  it("accepts a surrogate pair (a real character outside the BMP) in a description", async () => {
    const response = await world.client.post("/v1/payments", paymentRequest("emoji-1", "1.00", { description: "thanks \ud83d\ude00" }), { "idempotency-key": randomUUID() });
    expect(response.status).toBe(201);
    expect(response.json.description).toBe("thanks \ud83d\ude00");
  });

  it("answers 422 for a NUL in a nested member name and in another route's body", async () => {
    const account = await world.client.post("/v1/accounts", { id: "carol\u0000", kind: "customer", currency: "USD" });
    expect(account.status).toBe(422);
    expect(account.json.errors[0]).toMatchObject({ field: "id", in: "body" });
    const refund = await world.client.singleSend().post("/v1/refunds", { client_reference: "r-1", payment_client_reference: "nul-1", amount: "1.00", "currency\u0000": "USD" }, { "idempotency-key": randomUUID() });
    expect(refund.status).toBe(422);
    expect(refund.json.errors[0]).toMatchObject({ field: "currency\u0000", in: "body" });
  });

  it("answers 422 for a NUL in a query parameter and in a path parameter", async () => {
    const query = await world.client.get("/v1/payments?client_reference=a%00b");
    expect(query.status).toBe(422);
    expect(query.json.errors[0]).toMatchObject({ field: "client_reference", in: "query" });
    const path = await world.client.get("/v1/payments/pay_%00");
    expect(path.status).toBe(422);
    expect(path.json.errors[0]).toMatchObject({ field: "id", in: "path" });
  });
});

describe("a 500 says a retry is safe only when a retry can succeed", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let client: ApiClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    app = buildHttpServer({
      pool: db.pool,
      logger: createLogger({ destination: new Writable({ write(_chunk, _encoding, done) { done(); } }) }),
      extraRoutes: [(server) => {
        // A deterministic failure: the same statement fails the same way every time.
        server.get("/probe/data-exception", async () => (await db.pool.query("SELECT 1 / 0")).rows);
        // A transient one: a lock held by another transaction, with a lock timeout.
        server.get("/probe/lock-timeout", async () => withTransaction(db.pool, async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '20ms'");
          await tx.query("LOCK TABLE tenant IN ACCESS EXCLUSIVE MODE");
          return { locked: true };
        }));
      }],
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    client = new ApiClient(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, undefined);
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  it("says retryable: false and not to resend for a data exception", async () => {
    const response = await client.get("/probe/data-exception");
    expect(response.status).toBe(500);
    expect(response.json).toMatchObject({ code: "internal_error", retryable: false });
    expect(response.json.detail).toMatch(/will fail the same way/);
    expect(response.json.title).not.toMatch(/retry with the same key is safe/);
  });

  it("says retryable: true for a lock timeout, and the retry succeeds once the lock is gone", async () => {
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE tenant IN ACCESS SHARE MODE");
      const response = await client.get("/probe/lock-timeout");
      expect(response.status).toBe(500);
      expect(response.json).toMatchObject({ code: "internal_error", retryable: true });
      expect(response.json.detail).toMatch(/retry with the same Idempotency-Key is safe/);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect((await client.get("/probe/lock-timeout")).status).toBe(200);
  });
});
