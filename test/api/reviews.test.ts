import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { givenHeldCorrection } from "./held-correction.ts";
import { PAYEE_TWO_KEY } from "../files/support.ts";

describe("the review queue over HTTP", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  let other: ApiWorld;
  let reviewId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "reviews");
    other = await givenApiWorld(db.pool, "reviews-other");
    ({ reviewId } = await givenHeldCorrection(db, world, "fedach"));
  });
  afterAll(async () => {
    await world.api.close();
    await other.api.close();
    await db.drop();
  });

  it("lists the tenant's open reviews, and none of another tenant's", async () => {
    const listed = await world.client.get("/v1/reviews?state=open");
    expect(listed.status).toBe(200);
    expect(listed.json.data).toMatchObject([{ review_id: reviewId, reason: "conflict", state: "open", natural_key: PAYEE_TWO_KEY, amount_minor: "20500" }]);
    expect((await other.client.get("/v1/reviews?state=open")).json).toEqual({ data: [], has_more: false, next_cursor: null });
    expect((await other.client.post(`/v1/reviews/${reviewId}/decision`, { decision: "refuse", reason: "not mine", operator: "mallory" }, { "idempotency-key": randomUUID() })).status).toBe(404);
    expect((await world.client.get("/v1/reviews?state=closed")).status).toBe(400);
  });

  it("requires an operator and a reason", async () => {
    const response = await world.client.post(`/v1/reviews/${reviewId}/decision`, { decision: "replace", reason: "ok" }, { "idempotency-key": randomUUID() });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: "request_invalid" });
  });

  it("replaces with an Idempotency-Key: one compensation, the payee at 205.00, and the key's replay answers the same bytes", async () => {
    const key = randomUUID();
    const body = { decision: "replace", reason: "partner confirmed 205.00", operator: "ops-1" };
    const first = await world.client.post(`/v1/reviews/${reviewId}/decision`, body, { "idempotency-key": key });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ review_id: reviewId, decision: "replace", state: "replaced", operator: "ops-1", compensation_key: `${PAYEE_TWO_KEY}:post:compensate`, posting_key: `${PAYEE_TWO_KEY}:replace:${reviewId}` });
    const replay = await world.client.singleSend().post(`/v1/reviews/${reviewId}/decision`, body, { "idempotency-key": key });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const { rows } = await db.pool.query("SELECT 1 FROM transfer WHERE tenant_id = $1 AND kind = 'correction-compensation'", [world.tenantId]);
    expect(rows).toHaveLength(1);
    expect((await world.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "205.00" });
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("refuses another decision under a new key: 409 review_decided naming the first", async () => {
    const response = await world.client.post(`/v1/reviews/${reviewId}/decision`, { decision: "apply_as_new", reason: "second thoughts", operator: "ops-2" }, { "idempotency-key": randomUUID() });
    expect(response.status).toBe(409);
    const namingTheFirst = expect.stringMatching(/replace by ops-1/);
    expect(response.json).toMatchObject({ code: "review_decided", detail: namingTheFirst });
  });

  it("shows the correction in the payee's statement as technical corrections with their origin", async () => {
    const statement = await world.client.get("/v1/accounts/payee-two/statement");
    expect(statement.status).toBe(200);
    expect(statement.json).toMatchObject({ account: "payee-two", balance: "205.00", truncated: false });
    const entries = statement.json.entries as Array<{ transfer_key: string; category: string; origin: string; direction: string; amount: string }>;
    expect(entries.map((e) => [e.category, e.direction, e.amount])).toEqual([
      ["posting", "credit", "200.00"], ["technical_correction", "debit", "200.00"], ["technical_correction", "credit", "205.00"],
    ]);
    expect(entries.slice(1).map((e) => e.origin)).toEqual([`review:${reviewId}`, `review:${reviewId}`]);
    expect((await world.client.get("/v1/accounts/nobody/statement")).status).toBe(404);
  });
});
