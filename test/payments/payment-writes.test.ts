import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentGroupCommitOf } from "../../src/payments/payment-group-commit.ts";
import { applyPaymentRequest } from "../../src/payments/payment-request.ts";
import type { IdempotentReply } from "../../src/requests/idempotent-request.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const ENDPOINT = "POST /v1/payments";

/**
 * The payment resource a first-time POST answers with is built before its row is written, so the
 * row, its event and the stored response can go out as one statement (docs/decisions/0051). It
 * must be exactly what the stored row reads back as, on the batched path and alone.
 */
describe("the payment a first-time POST answers with is the row it stored", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "payment-writes");
    await fund(world.client, "alice", "5.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  async function storedBody(reply: IdempotentReply): Promise<unknown> {
    const paymentId = (JSON.parse(reply.body) as { id: string }).id;
    const stored = await world.client.get(`/v1/payments/${paymentId}`);
    expect(stored.status).toBe(200);
    return stored.json;
  }

  for (const path of ["batched", "alone"] as const) {
    it(`${path}: a succeeded payment's 201 body equals GET of it, created_at to the millisecond`, async () => {
      const options = path === "batched" ? { groupCommit: paymentGroupCommitOf(db.pool) } : {};
      const reply = await applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, randomUUID(), paymentRequest(`ok-${path}`, "1.25", { description: "rent" }), options);
      expect(reply.status).toBe(201);
      expect(JSON.parse(reply.body)).toEqual(await storedBody(reply));
    });

    it(`${path}: a declined payment's 422 names the stored payment, whose row says insufficient_funds`, async () => {
      const options = path === "batched" ? { groupCommit: paymentGroupCommitOf(db.pool) } : {};
      const reply = await applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, randomUUID(), paymentRequest(`declined-${path}`, "900.00"), options);
      expect(reply.status).toBe(422);
      const paymentId = (JSON.parse(reply.body) as { payment_id: string }).payment_id;
      const stored = await world.client.get(`/v1/payments/${paymentId}`);
      expect(stored.json).toMatchObject({ id: paymentId, status: "declined", decline_code: "insufficient_funds", client_reference: `declined-${path}` });
    });
  }

  it("a replay answers the very body the first POST answered", async () => {
    const key = randomUUID();
    const body = paymentRequest("replayed-body", "0.75");
    const first = await applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, key, body, { groupCommit: paymentGroupCommitOf(db.pool) });
    const again = await applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, key, body, { groupCommit: paymentGroupCommitOf(db.pool) });
    expect(again).toMatchObject({ replayed: true, status: first.status, body: first.body });
    expect(JSON.parse(first.body)).toEqual(await storedBody(first));
  });
});
