import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransaction } from "../../src/db/transaction.ts";
import { deleteExpired } from "../../src/idempotency/records.ts";
import { lockIntent } from "../../src/payments/intent-lock.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, ledgerCounts, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("the replay window and the intent", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "window");
    await fund(world.client, "alice", "20.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("after the window no longer replays the response, yet the intent still never posts twice", async () => {
    const key = randomUUID();
    const first = await world.client.post("/v1/payments", paymentRequest("late-retry", "4.00"), { "idempotency-key": key });
    await db.pool.query("UPDATE idempotency_record SET expires_at = now() - interval '1 second' WHERE tenant_id = $1", [world.tenantId]);
    expect(await deleteExpired(db.pool)).toBeGreaterThan(0);
    const before = await ledgerCounts(db.pool, world.tenantId);

    const late = await world.client.post("/v1/payments", paymentRequest("late-retry", "4.00"), { "idempotency-key": key });
    expect(late.status).toBe(409);
    expect(late.headers.get("idempotent-replayed")).toBeNull();
    expect(late.json).toMatchObject({ code: "duplicate_client_reference", payment_id: first.json.id });
    expect(await ledgerCounts(db.pool, world.tenantId)).toEqual(before);
  });

  it("answers in_progress for an intent whose request is being processed right now", async () => {
    const running = await openTransaction(db.pool);
    try {
      await lockIntent(running.tx, world.tenantId, "still-running");
      const status = await world.client.get("/v1/payments?client_reference=still-running");
      expect(status.status).toBe(200);
      expect(status.json).toEqual({ client_reference: "still-running", status: "in_progress" });
    } finally {
      await running.rollback();
    }
    expect((await world.client.get("/v1/payments?client_reference=still-running")).status).toBe(404);
  });
});
