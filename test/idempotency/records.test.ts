import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { claim, complete, deleteExpired, findRecord, findRecordAuditingRepeat, oldestInProgressAgeSeconds, type IdempotencyScope } from "../../src/idempotency/records.ts";
import { requestDigest } from "../../src/idempotency/request-digest.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const canonical = { amount_minor: "100" };
const digest = requestDigest(canonical);
const response = (body: string) => ({ status: 201, body, effectRef: "pay_x" });

describe("idempotency records", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  /** A claim committed on its own, as a two-phase flow (card authorization) does before it calls out. */
  async function committedClaim(scope: IdempotencyScope): Promise<number> {
    const claimed = await withTransaction(db.pool, (tx) => claim(tx, scope, digest, canonical));
    if (claimed.kind !== "claimed") throw new Error(`expected a claim, got ${claimed.kind}`);
    return claimed.attempt;
  }

  async function expireLease(scope: IdempotencyScope): Promise<void> {
    await db.pool.query("UPDATE idempotency_record SET lease_until = now() - interval '1 second' WHERE tenant_id = $1 AND idem_key = $2", [scope.tenantId, scope.key]);
  }

  it("fences a stale worker: after its lease expires and another takes over, the stale one cannot complete", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "takeover-1" };
    const staleAttempt = await committedClaim(scope);
    expect(staleAttempt).toBe(1);
    await expireLease(scope);

    const takeover = await committedClaim(scope);
    expect(takeover).toBe(2);

    const staleCompleted = await withTransaction(db.pool, (tx) => complete(tx, scope, staleAttempt, response("stale")));
    expect(staleCompleted).toBe(false);
    const freshCompleted = await withTransaction(db.pool, (tx) => complete(tx, scope, takeover, response("fresh")));
    expect(freshCompleted).toBe(true);
    expect(await findRecord(db.pool, scope)).toMatchObject({ state: "completed", response: { body: "fresh" } });
  });

  it("does not take over a lease that has not expired", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "held-1" };
    await committedClaim(scope);
    const second = await withTransaction(db.pool, (tx) => claim(tx, scope, digest, canonical));
    expect(second).toMatchObject({ kind: "held", record: { state: "in_progress", leaseExpired: false } });
  });

  it("does not take over an expired lease for a different request", async () => {
    const scope = { tenantId: "t1", endpoint: "POST /x", key: "held-2" };
    await committedClaim(scope);
    await expireLease(scope);
    const other = await withTransaction(db.pool, (tx) => claim(tx, scope, requestDigest({ amount_minor: "999" }), { amount_minor: "999" }));
    expect(other).toMatchObject({ kind: "held", record: { digest } });
  });

  async function auditRows(scope: IdempotencyScope): Promise<Array<{ reason: string; original_ref: string | null }>> {
    const { rows } = await db.pool.query("SELECT reason, original_ref FROM dedup_event WHERE tenant_id = $1 AND dedup_key = $2 ORDER BY created_at", [scope.tenantId, scope.key]);
    return rows;
  }

  it("answers a repeat in one statement that also writes its audit row: replayed, naming the effect", async () => {
    const scope = { tenantId: "t3", endpoint: "POST /x", key: "repeat-1" };
    const attempt = await committedClaim(scope);
    await withTransaction(db.pool, (tx) => complete(tx, scope, attempt, response("done")));
    expect(await findRecordAuditingRepeat(db.pool, scope, digest)).toMatchObject({ state: "completed", response: { body: "done" } });
    expect(await auditRows(scope)).toEqual([{ reason: "replayed", original_ref: "pay_x" }]);
  });

  it("audits a key reused for another request as key_reuse, and one still running as in_progress", async () => {
    const reused = { tenantId: "t3", endpoint: "POST /x", key: "repeat-2" };
    await withTransaction(db.pool, async (tx) => complete(tx, reused, await claim(tx, reused, digest, canonical).then((c) => (c.kind === "claimed" ? c.attempt : 0)), response("done")));
    await findRecordAuditingRepeat(db.pool, reused, requestDigest({ amount_minor: "999" }));
    const running = { tenantId: "t3", endpoint: "POST /x", key: "repeat-3" };
    await committedClaim(running);
    await findRecordAuditingRepeat(db.pool, running, digest);
    expect(await auditRows(reused)).toEqual([{ reason: "key_reuse", original_ref: "pay_x" }]);
    expect(await auditRows(running)).toEqual([{ reason: "in_progress", original_ref: null }]);
  });

  it("writes no audit row for a first request, nor for a record whose lease expired (it is claimed over, not answered)", async () => {
    const fresh = { tenantId: "t3", endpoint: "POST /x", key: "repeat-4" };
    expect(await findRecordAuditingRepeat(db.pool, fresh, digest)).toBeUndefined();
    const expired = { tenantId: "t3", endpoint: "POST /x", key: "repeat-5" };
    await committedClaim(expired);
    await expireLease(expired);
    expect(await findRecordAuditingRepeat(db.pool, expired, digest)).toMatchObject({ state: "in_progress", leaseExpired: true });
    expect([...await auditRows(fresh), ...await auditRows(expired)]).toEqual([]);
  });

  it("reports the age of the oldest in_progress record", async () => {
    await db.pool.query("UPDATE idempotency_record SET created_at = now() - interval '90 seconds' WHERE idem_key = 'held-1'");
    expect(await oldestInProgressAgeSeconds(db.pool)).toBeGreaterThanOrEqual(90);
  });

  it("deletes expired completed records in bounded batches and keeps the rest", async () => {
    for (let i = 0; i < 5; i++) {
      const scope = { tenantId: "t2", endpoint: "POST /x", key: `old-${i}` };
      const attempt = await committedClaim(scope);
      await withTransaction(db.pool, (tx) => complete(tx, scope, attempt, response("old")));
    }
    await db.pool.query("UPDATE idempotency_record SET expires_at = now() - interval '1 day' WHERE tenant_id = 't2' AND idem_key <> 'old-4'");
    expect(await deleteExpired(db.pool, 3)).toBe(3);
    expect(await deleteExpired(db.pool, 3)).toBe(1);
    expect(await deleteExpired(db.pool, 3)).toBe(0);
    const { rows } = await db.pool.query("SELECT idem_key FROM idempotency_record WHERE tenant_id = 't2'");
    expect(rows.map((r) => r.idem_key)).toEqual(["old-4"]);
  });
});
