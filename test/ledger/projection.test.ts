import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransaction } from "../../src/db/transaction.ts";
import { advanceProjection, balanceOf } from "../../src/ledger/balance.ts";
import { postTransfer } from "../../src/ledger/post-transfer.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

describe("balance projection and ledger verify", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    for (let i = 0; i < 10; i++) await post(db.pool, transferOf("t1", `p:${i}`, "settlement", i % 2 ? "alice" : "bob", 100n));
  });
  afterAll(async () => {
    await db.drop();
  });

  it("gives the same balance before and after the projection advances", async () => {
    const before = await balanceOf(db.pool, "t1", "alice");
    const advanced = await advanceProjection(db.pool, "t1");
    expect(advanced.entriesFolded).toBe(20n);
    expect(await balanceOf(db.pool, "t1", "alice")).toEqual(before);
    expect(before?.balanceMinor).toBe(500n);
  });

  it("adds entries posted after the watermark to the projected balance", async () => {
    await post(db.pool, transferOf("t1", "p:late", "settlement", "alice", 7n));
    expect((await balanceOf(db.pool, "t1", "alice"))?.balanceMinor).toBe(507n);
  });

  it("never skips an entry of a transaction that was still open when the projection advanced", async () => {
    const slow = await openTransaction(db.pool);
    await postTransfer(slow.tx, transferOf("t1", "p:slow", "settlement", "bob", 9n));
    await advanceProjection(db.pool, "t1"); // runs while the slow transaction is open
    await slow.commit();
    await advanceProjection(db.pool, "t1");
    const report = await verifyLedger(db.pool);
    expect(report.ok).toBe(true);
    expect((await balanceOf(db.pool, "t1", "bob"))?.balanceMinor).toBe(509n);
  });

  it("folds in bounded steps, never splitting a transaction", async () => {
    await givenAccounts(db.pool, "t2", [["settlement", "settlement"], ["dave", "customer"]]);
    for (let i = 0; i < 5; i++) await post(db.pool, transferOf("t2", `s:${i}`, "settlement", "dave", 1n));
    const advanced = await advanceProjection(db.pool, "t2", { batchEntriesMax: 3 });
    expect(advanced.entriesFolded).toBe(10n);
    expect(advanced.steps).toBeGreaterThanOrEqual(3);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("is not held back by a long transaction in another database of the same server (regression)", async () => {
    const other = await createEmptyDatabase();
    const client = await other.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_current_xact_id()"); // holds a cluster-wide transaction id
      await post(db.pool, transferOf("t1", "p:beside-other-db", "settlement", "alice", 1n));
      const advanced = await advanceProjection(db.pool, "t1");
      expect(advanced.entriesFolded).toBe(2n);
      await client.query("ROLLBACK");
    } finally {
      client.release();
      await other.drop();
    }
  });

  it("reports ok on an untouched ledger, and names the account after the projection is tampered with", async () => {
    expect((await verifyLedger(db.pool)).ok).toBe(true);
    await db.pool.query("UPDATE account_balance SET credits_minor = credits_minor + 1 WHERE tenant_id = 't1' AND account_id = 'alice'");
    const report = await verifyLedger(db.pool);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "LEDGER_PROJECTION_MISMATCH", tenantId: "t1", accountId: "alice" })]);
  });
});
