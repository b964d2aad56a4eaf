import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransaction } from "../../src/db/transaction.ts";
import { claim } from "../../src/idempotency/records.ts";
import { requestDigest } from "../../src/idempotency/request-digest.ts";
import { paymentBatches } from "../../src/observability/metrics.ts";
import { PaymentGroupCommit } from "../../src/payments/payment-group-commit.ts";
import { applyPaymentRequest } from "../../src/payments/payment-request.ts";
import type { IdempotentReply } from "../../src/requests/idempotent-request.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const ENDPOINT = "POST /v1/payments";

async function committedBatches(outcome: string): Promise<number> {
  return (await paymentBatches.get()).values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
}

/** Resolves when `condition` holds; checks again on each turn of the event loop (no deadline: the test's timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The answer as a caller sees it, with what differs between tenants by construction (payment ids, times) masked. */
function answerOf(reply: IdempotentReply): string {
  return `${reply.status} ${reply.body.replace(/pay_[0-9a-f]{24}/g, "pay_*").replace(/"created_at":"[^"]*"/g, "\"created_at\":\"*\"")}`;
}

/**
 * Batches formed on purpose: a writer that runs one batch at a time, whose first batch (the
 * "blocker") waits on a debtor row the test holds locked; the requests sent meanwhile queue and,
 * once the lock is released, go together in the next batch.
 */
describe("group-committed payment batches", () => {
  let db: TestDatabase;
  let batched: ApiWorld;
  let alone: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 12 });
    batched = await givenApiWorld(db.pool, "batched");
    alone = await givenApiWorld(db.pool, "alone");
    for (const world of [batched, alone]) {
      for (const id of ["carol", "dave"]) expect((await world.client.post("/v1/accounts", { id, kind: "customer", currency: "USD" })).status).toBe(201);
      await fund(world.client, "alice", "100.00");
      await fund(world.client, "carol", "100.00");
    }
  });
  afterAll(async () => {
    await batched.api.close();
    await alone.api.close();
    await db.drop();
  });

  /** Starts a blocked batch in `world` (carol's row locked by the test), then sends `requests` while it waits; resolves with their answers once the lock is released. */
  async function sendBehindBlocker(world: ApiWorld, writer: PaymentGroupCommit, blockerKey: string, requests: Array<{ key: string; body: object }>): Promise<{ blocker: IdempotentReply; answers: IdempotentReply[] }> {
    const lock = await openTransaction(db.pool);
    await lock.tx.query("SELECT 1 FROM account WHERE tenant_id = $1 AND account_id = 'carol' FOR UPDATE", [world.tenantId]);
    const blocker = applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, blockerKey, { ...paymentRequest(`blocker-${blockerKey}`, "1.00"), debtor_account: "carol" }, { groupCommit: writer });
    await until(() => writer.batchesInFlight === 1); // the blocker's batch is running before any other request is sent
    const answers = Promise.all(requests.map((r) => applyPaymentRequest(db.pool, world.tenantId, ENDPOINT, r.key, r.body, { groupCommit: writer })));
    await until(() => writer.queued === requests.length);
    await lock.commit();
    return { blocker: await blocker, answers: await answers };
  }

  it("answers a batch of a payment, an unknown account, a key reuse and a decline for funds each as it would alone", async () => {
    const requestsIn = (prefix: string) => [
      { key: `${prefix}-pay`, body: paymentRequest("mixed-pay", "3.00") },
      { key: `${prefix}-unknown`, body: { ...paymentRequest("mixed-unknown", "3.00"), creditor_account: "nobody" } },
      { key: `${prefix}-blocker`, body: paymentRequest("mixed-reuse", "3.00") },
      { key: `${prefix}-poor`, body: { ...paymentRequest("mixed-poor", "3.00"), debtor_account: "dave" } },
    ];
    const before = await committedBatches("committed");
    const writer = new PaymentGroupCommit(db.pool, { batchRequestsMax: 64, batchesInFlightMax: 1, queueMax: 64 });
    const together = await sendBehindBlocker(batched, writer, "b-blocker", requestsIn("b"));
    expect(await committedBatches("committed")).toBe(before + 2); // the blocker's batch, then the four in one

    const blockerAlone = await applyPaymentRequest(db.pool, alone.tenantId, ENDPOINT, "a-blocker", { ...paymentRequest("blocker-b-blocker", "1.00"), debtor_account: "carol" });
    const answersAlone: IdempotentReply[] = [];
    for (const r of requestsIn("a")) answersAlone.push(await applyPaymentRequest(db.pool, alone.tenantId, ENDPOINT, r.key, r.body));

    expect([together.blocker, ...together.answers].map(answerOf)).toEqual([blockerAlone, ...answersAlone].map(answerOf));
    expect(together.answers.map((a) => `${a.status} ${a.status === 201 ? "" : JSON.parse(a.body).code}`))
      .toEqual(["201 ", "404 account_not_found", "422 idempotency_key_reuse", "422 insufficient_funds"]);
    const { rows } = await db.pool.query("SELECT client_reference, status FROM payment WHERE tenant_id = $1 AND client_reference LIKE 'mixed-%' ORDER BY 1", [batched.tenantId]);
    expect(rows).toEqual([{ client_reference: "mixed-pay", status: "succeeded" }, { client_reference: "mixed-poor", status: "declined" }]);
  });

  it("runs every caller of a batch that fails as a whole again alone, and each gets its answer", async () => {
    const heldKey = `held-${randomUUID()}`;
    const heldBody = paymentRequest("fallback-held", "2.00");
    const canonical = { client_reference: "fallback-held", amount_minor: "200", currency: "USD", debtor_account: "alice", creditor_account: "bob", description: null };
    // Another transaction holds this key's claim: the batch's claim statement hits lock_timeout, so the whole batch fails.
    const holder = await openTransaction(db.pool);
    expect((await claim(holder.tx, { tenantId: batched.tenantId, endpoint: ENDPOINT, key: heldKey }, requestDigest(canonical), canonical)).kind).toBe("claimed");
    const before = await committedBatches("fallback");
    const writer = new PaymentGroupCommit(db.pool, { batchRequestsMax: 64, batchesInFlightMax: 1, queueMax: 64 });
    const { answers } = await sendBehindBlocker(batched, writer, `fb-blocker-${randomUUID()}`, [
      { key: heldKey, body: heldBody },
      { key: randomUUID(), body: paymentRequest("fallback-1", "2.00") },
      { key: randomUUID(), body: paymentRequest("fallback-2", "2.00") },
    ]);
    await holder.rollback();

    expect(await committedBatches("fallback")).toBe(before + 1);
    expect(answers.map((a) => `${a.status} ${a.status === 201 ? "" : JSON.parse(a.body).code}`)).toEqual(["409 request_in_progress", "201 ", "201 "]);
    const { rows } = await db.pool.query("SELECT client_reference FROM payment WHERE tenant_id = $1 AND client_reference LIKE 'fallback-%' ORDER BY 1", [batched.tenantId]);
    expect(rows.map((r) => r.client_reference)).toEqual(["fallback-1", "fallback-2"]);
  });

  it("splits the callers waiting behind a batch into batches of at most the bound: three behind a bound of two go as two and one", async () => {
    const writer = new PaymentGroupCommit(db.pool, { batchRequestsMax: 2, batchesInFlightMax: 1, queueMax: 64 });
    const before = await committedBatches("committed");
    const { blocker, answers } = await sendBehindBlocker(batched, writer, `split-blocker-${randomUUID()}`, [1, 2, 3].map((i) => ({ key: randomUUID(), body: paymentRequest(`split-${i}`, "1.00") })));
    expect([blocker, ...answers].map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(await committedBatches("committed")).toBe(before + 3); // the blocker's, then two, then one
  });

  it("runs a caller alone when the queue is at its bound, without waiting for the batch in flight", async () => {
    const writer = new PaymentGroupCommit(db.pool, { batchRequestsMax: 64, batchesInFlightMax: 1, queueMax: 1 });
    const lock = await openTransaction(db.pool);
    await lock.tx.query("SELECT 1 FROM account WHERE tenant_id = $1 AND account_id = 'carol' FOR UPDATE", [batched.tenantId]);
    const send = (ref: string, debtor: string) => applyPaymentRequest(db.pool, batched.tenantId, ENDPOINT, randomUUID(), { ...paymentRequest(ref, "1.00"), debtor_account: debtor }, { groupCommit: writer });
    const blocker = send("bound-blocker", "carol");
    await until(() => writer.batchesInFlight === 1);
    const queued = send("bound-queued", "alice");
    await until(() => writer.queued === 1);
    // One past the bound: answered while the blocker's batch still waits on the lock the test holds.
    expect((await send("bound-past", "alice")).status).toBe(201);
    expect(writer.queued).toBe(1);
    await lock.commit();
    expect([(await blocker).status, (await queued).status]).toEqual([201, 201]);
  });
});
