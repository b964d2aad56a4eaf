import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { claim, complete, findRecord, type IdempotencyScope } from "../../src/idempotency/records.ts";
import { RepeatScreen } from "../../src/idempotency/repeat-screen.ts";
import { requestDigest } from "../../src/idempotency/request-digest.ts";
import { repeatScreenBatches } from "../../src/observability/metrics.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const canonical = { amount_minor: "100" };
const digest = requestDigest(canonical);
const otherDigest = requestDigest({ amount_minor: "999" });
const ENDPOINT = "POST /v1/screen";

async function statements(path: "batch" | "alone_queue_full"): Promise<number> {
  return (await repeatScreenBatches.get()).values.filter((v) => v.labels.path === path).reduce((sum, v) => sum + v.value, 0);
}

describe("the repeat screen: the replay fast path of concurrent requests in shared statements", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  const scopeOf = (tenantId: string, key: string): IdempotencyScope => ({ tenantId, endpoint: ENDPOINT, key });

  async function claimed(scope: IdempotencyScope, body?: string): Promise<void> {
    await withTransaction(db.pool, async (tx) => {
      const c = await claim(tx, scope, digest, canonical);
      if (c.kind !== "claimed") throw new Error(`expected a claim of ${scope.key}`);
      if (body !== undefined) await complete(tx, scope, c.attempt, { status: 201, body, effectRef: `pay_${body}` });
    });
  }

  async function auditReasons(tenantId: string, key: string): Promise<string[]> {
    const { rows } = await db.pool.query<{ reason: string }>(
      "SELECT reason FROM dedup_event WHERE tenant_id = $1 AND dedup_key = $2 ORDER BY reason", [tenantId, key]);
    return rows.map((r) => r.reason);
  }

  it("answers lookups that arrive while one is in flight in one statement, each with its own record and audit row", async () => {
    const t = "screen-t1";
    await claimed(scopeOf(t, "done"), "done");
    await claimed(scopeOf(t, "reused"), "reused");
    await claimed(scopeOf(t, "running"));
    await claimed(scopeOf(t, "expired"));
    await db.pool.query("UPDATE idempotency_record SET lease_until = now() - interval '1 second' WHERE tenant_id = $1 AND idem_key = 'expired'", [t]);
    const screen = new RepeatScreen(db.pool, { batchItemsMax: 64, batchesInFlightMax: 1, queueMax: 100 });
    const before = await statements("batch");

    const asked: Array<[string, string]> = [["first", digest], ["done", digest], ["reused", otherDigest], ["running", digest], ["expired", digest], ["missing", digest], ["done", digest]];
    const answers = await Promise.all(asked.map(([key, d]) => screen.find(scopeOf(t, key), d)));

    // The first lookup went alone at once; the six that arrived while it ran went together.
    expect((await statements("batch")) - before).toBe(2);
    for (const [i, [key]] of asked.entries()) expect(answers[i]).toEqual(await findRecord(db.pool, scopeOf(t, key)));
    expect(answers[1]).toMatchObject({ state: "completed", response: { body: "done" } });
    expect(answers[5]).toBeUndefined();
    expect(await auditReasons(t, "done")).toEqual(["replayed", "replayed"]);
    expect(await auditReasons(t, "reused")).toEqual(["key_reuse"]);
    expect(await auditReasons(t, "running")).toEqual(["in_progress"]);
    expect([...await auditReasons(t, "expired"), ...await auditReasons(t, "missing"), ...await auditReasons(t, "first")]).toEqual([]);
  });

  it("never shares a statement between tenants: the same key in two tenants answers each with its own record", async () => {
    await claimed(scopeOf("screen-a", "same"), "from-a");
    await claimed(scopeOf("screen-b", "same"), "from-b");
    const screen = new RepeatScreen(db.pool, { batchItemsMax: 64, batchesInFlightMax: 1, queueMax: 100 });
    const before = await statements("batch");

    const [blocker, a, b, a2] = await Promise.all([
      screen.find(scopeOf("screen-a", "none"), digest), screen.find(scopeOf("screen-a", "same"), digest),
      screen.find(scopeOf("screen-b", "same"), digest), screen.find(scopeOf("screen-a", "same"), digest),
    ]);

    expect(blocker).toBeUndefined();
    expect([a, b, a2].map((r) => (r?.state === "completed" ? r.response.body : r?.state))).toEqual(["from-a", "from-b", "from-a"]);
    // The blocker alone, then tenant a's two lookups together, then tenant b's.
    expect((await statements("batch")) - before).toBe(3);
    expect(await auditReasons("screen-a", "same")).toEqual(["replayed", "replayed"]);
    expect(await auditReasons("screen-b", "same")).toEqual(["replayed"]);
  });

  it("looks a request up alone, with the same answer and audit row, when the queue is at its bound", async () => {
    const t = "screen-t2";
    await claimed(scopeOf(t, "done"), "done");
    const screen = new RepeatScreen(db.pool, { batchItemsMax: 64, batchesInFlightMax: 1, queueMax: 1 });
    const alone = await statements("alone_queue_full");

    const answers = await Promise.all([screen.find(scopeOf(t, "x"), digest), screen.find(scopeOf(t, "y"), digest), screen.find(scopeOf(t, "done"), digest)]);

    expect((await statements("alone_queue_full")) - alone).toBe(1);
    expect(answers[2]).toMatchObject({ state: "completed", response: { body: "done" } });
    expect(await auditReasons(t, "done")).toEqual(["replayed"]);
  });

  it("fails every request of a statement that fails, as the single lookup did", async () => {
    const closed = createPool(db.url, { max: 1 });
    await closed.end();
    const screen = new RepeatScreen(closed, { batchItemsMax: 64, batchesInFlightMax: 1, queueMax: 100 });
    const results = await Promise.allSettled([screen.find(scopeOf("screen-t3", "a"), digest), screen.find(scopeOf("screen-t3", "b"), digest)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
