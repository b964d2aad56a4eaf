import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { paymentBatches, paymentBatchRequests } from "../../src/observability/metrics.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { entrySums } from "../support/money.ts";

async function counter(metric: typeof paymentBatches | typeof paymentBatchRequests, label: string, value: string): Promise<number> {
  return (await metric.get()).values.filter((v) => (v.labels as Record<string, unknown>)[label] === value).reduce((sum, v) => sum + v.value, 0);
}

/** POST /v1/payments group-commits concurrent first-time payments (docs/decisions/0043); each caller's answer stays its own. */
describe("group commit of first-time payments through HTTP", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 20 });
    world = await givenApiWorld(db.pool, "group-commit");
    for (const id of ["spender", "twin-payer"]) expect((await world.client.post("/v1/accounts", { id, kind: "customer", currency: "USD" })).status).toBe(201);
    await fund(world.client, "spender", "10.00");
    await fund(world.client, "twin-payer", "50.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("lets exactly 10 of 64 concurrent 1.00 debits through an account funded for 10.00, in shared batches, and declines 54", async () => {
    const client = world.client.singleSend();
    const batchesBefore = await counter(paymentBatches, "outcome", "committed");
    const batchedBefore = await counter(paymentBatchRequests, "path", "batch");
    const responses = await Promise.all(Array.from({ length: 64 }, (_, i) => client.post("/v1/payments", { ...paymentRequest(`spend-${i}`, "1.00"), debtor_account: "spender" }, { "idempotency-key": randomUUID() })));

    const answers = responses.map((r) => (r.status === 201 ? "201" : `${r.status} ${r.json.code}`));
    expect(answers.filter((a) => a === "201")).toHaveLength(10);
    expect(answers.filter((a) => a === "422 insufficient_funds")).toHaveLength(54);
    const { rows } = await db.pool.query("SELECT status, count(*)::int AS n FROM payment WHERE tenant_id = $1 AND debtor_account = 'spender' GROUP BY status ORDER BY status", [world.tenantId]);
    expect(rows).toEqual([{ status: "declined", n: 54 }, { status: "succeeded", n: 10 }]);
    expect((await world.client.get("/v1/accounts/spender/balance")).json.balance).toBe("0.00");
    expect(await entrySums(db.pool, world.tenantId, "spender")).toEqual({ debitsMinor: 1_000n, creditsMinor: 1_000n });
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
    // Some transaction held more than one of them: fewer batches committed than requests went through batches.
    const batched = (await counter(paymentBatchRequests, "path", "batch")) - batchedBefore;
    expect((await counter(paymentBatches, "outcome", "committed")) - batchesBefore).toBeLessThan(batched);
  });

  it("answers two requests with one client_reference sent at once with one payment and one 409", async () => {
    const client = world.client.singleSend();
    const body = { ...paymentRequest("twin-1", "5.00"), debtor_account: "twin-payer" };
    const responses = await Promise.all([randomUUID(), randomUUID()].map((key) => client.post("/v1/payments", body, { "idempotency-key": key })));

    const created = responses.filter((r) => r.status === 201);
    const refused = responses.filter((r) => r.status !== 201);
    expect(created).toHaveLength(1);
    expect(refused.map((r) => `${r.status} ${r.json.code} ${r.json.payment_id}`)).toEqual([`409 duplicate_client_reference ${created[0]?.json.id}`]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key = 'api:twin-1:debit'", [world.tenantId]);
    expect(rows[0].n).toBe(1);
    expect((await world.client.get("/v1/accounts/twin-payer/balance")).json.balance).toBe("45.00");
  });
});
