import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransaction, withTransaction } from "../../src/db/transaction.ts";
import { claim, claimTransactionSettings, completeAndCommit, findRecord, type IdempotencyScope } from "../../src/idempotency/records.ts";
import { requestDigest } from "../../src/idempotency/request-digest.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const canonical = { amount_minor: "100" };
const digest = requestDigest(canonical);
const response = (body: string) => ({ status: 201, body, effectRef: "pay_x" });

/**
 * The claim puts lock_timeout back in its own statement, and the completion goes out together
 * with COMMIT (docs/decisions/0051): what the separate RESET and the look at the completion's
 * row count did before must still hold.
 */
describe("claim and completion without their extra round trips", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query("CREATE TABLE effect_probe (key text PRIMARY KEY)");
  });
  afterAll(async () => {
    await db.drop();
  });

  async function committedClaim(scope: IdempotencyScope): Promise<number> {
    const claimed = await withTransaction(db.pool, (tx) => claim(tx, scope, digest, canonical));
    if (claimed.kind !== "claimed") throw new Error(`expected a claim, got ${claimed.kind}`);
    return claimed.attempt;
  }

  async function effectCommitted(key: string): Promise<boolean> {
    return (await db.pool.query("SELECT 1 FROM effect_probe WHERE key = $1", [key])).rowCount === 1;
  }

  it("after a claim, the transaction's lock waits are bounded by the session's lock_timeout again, not the claim's", async () => {
    const shown = await withTransaction(db.pool, async (tx) => {
      const during = (await tx.query<{ lock_timeout: string }>("SHOW lock_timeout")).rows[0]?.lock_timeout;
      await claim(tx, { tenantId: "t1", endpoint: "POST /x", key: "restore-1" }, digest, canonical);
      const after = (await tx.query<{ lock_timeout: string }>("SHOW lock_timeout")).rows[0]?.lock_timeout;
      return { during, after };
    }, { localSettings: claimTransactionSettings });
    expect(shown).toEqual({ during: `${claimTransactionSettings.lock_timeout}ms`, after: "1min" });
  });

  it("a claim of a key another open transaction holds is still cut short by the claim's bound (busy), not left to wait", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "busy-1" };
    const holder = await openTransaction(db.pool);
    try {
      expect((await claim(holder.tx, scope, digest, canonical)).kind).toBe("claimed");
      const second = await withTransaction(db.pool, (tx) => claim(tx, scope, digest, canonical), { localSettings: claimTransactionSettings })
        .catch((error: unknown) => error);
      expect(second).toEqual({ kind: "busy" });
    } finally {
      await holder.rollback();
    }
  });

  it("completes the attempt and commits its effect in the same round trip", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "complete-1" };
    const completed = await withTransaction(db.pool, async (tx) => {
      const claimed = await claim(tx, scope, digest, canonical);
      if (claimed.kind !== "claimed") throw new Error("expected a claim");
      await tx.query("INSERT INTO effect_probe VALUES ('complete-1')");
      return completeAndCommit(tx, scope, claimed.attempt, response("done"));
    }, { localSettings: claimTransactionSettings });
    expect(completed).toBe(true);
    expect(await effectCommitted("complete-1")).toBe(true);
    expect(await findRecord(db.pool, scope)).toMatchObject({ state: "completed", response: { body: "done" } });
  });

  it("a fenced-off attempt commits none of its transaction: the effect is rolled back with the refused completion", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "fenced-1" };
    const stale = await committedClaim(scope);
    await db.pool.query("UPDATE idempotency_record SET lease_until = now() - interval '1 second' WHERE tenant_id = $1 AND idem_key = $2", [scope.tenantId, scope.key]);
    const takeover = await committedClaim(scope);
    expect(takeover).toBe(stale + 1);

    const staleCompleted = await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO effect_probe VALUES ('fenced-1')");
      return completeAndCommit(tx, scope, stale, response("stale"));
    });
    expect(staleCompleted).toBe(false);
    expect(await effectCommitted("fenced-1")).toBe(false);
    expect(await findRecord(db.pool, scope)).toMatchObject({ state: "in_progress", attempt: takeover });
  });
});
