import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransaction } from "../../src/db/transaction.ts";
import { advanceProjection, balanceOf, projectionLag } from "../../src/ledger/balance.ts";
import { postTransfer } from "../../src/ledger/post-transfers.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { entrySums } from "../support/money.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

describe("exact balances: folded sums plus delta rows", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    for (let i = 0; i < 10; i++) await post(db.pool, transferOf("t1", `p:${i}`, "settlement", i % 2 ? "alice" : "bob", 100n));
  });
  afterAll(async () => {
    await db.drop();
  });

  it("writes one delta row per account and transfer with every entry insert, in the database itself", async () => {
    expect(await projectionLag(db.pool, "t1")).toBe(20);
    const { rows } = await db.pool.query("SELECT debits_minor::text, credits_minor::text FROM balance_delta WHERE tenant_id = 't1' AND account_id = 'alice' AND transfer_key = 'p:1'");
    expect(rows).toEqual([{ debits_minor: "0", credits_minor: "100" }]);
  });

  it("gives the same balance before and after the projection advances, and leaves no delta behind", async () => {
    const before = await balanceOf(db.pool, "t1", "alice");
    const advanced = await advanceProjection(db.pool, "t1");
    expect(advanced.deltasFolded).toBe(20);
    expect(await projectionLag(db.pool, "t1")).toBe(0);
    expect(await balanceOf(db.pool, "t1", "alice")).toEqual(before);
    expect(before?.balanceMinor).toBe(500n);
  });

  it("adds transfers posted after the last advance to the folded balance", async () => {
    await post(db.pool, transferOf("t1", "p:late", "settlement", "alice", 7n));
    expect((await balanceOf(db.pool, "t1", "alice"))?.balanceMinor).toBe(507n);
  });

  it("never loses a transfer whose transaction was still open while the projection advanced (regression)", async () => {
    const slow = await openTransaction(db.pool);
    await postTransfer(slow.tx, transferOf("t1", "p:slow", "settlement", "bob", 9n));
    await advanceProjection(db.pool, "t1"); // cannot see the open transaction's delta row
    await slow.commit();
    expect((await balanceOf(db.pool, "t1", "bob"))?.balanceMinor).toBe(509n);
    await advanceProjection(db.pool, "t1");
    expect((await balanceOf(db.pool, "t1", "bob"))?.balanceMinor).toBe(509n);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });

  it("folds in bounded steps", async () => {
    await givenAccounts(db.pool, "t2", [["settlement", "settlement"], ["dave", "customer"]]);
    for (let i = 0; i < 5; i++) await post(db.pool, transferOf("t2", `s:${i}`, "settlement", "dave", 1n));
    const advanced = await advanceProjection(db.pool, "t2", { batchDeltasMax: 3 });
    expect(advanced.deltasFolded).toBe(10);
    expect(advanced.steps).toBe(4);
    expect((await balanceOf(db.pool, "t2", "dave"))?.balanceMinor).toBe(5n);
  });

  it("stays exact with two projectors folding at once beside concurrent postings", async () => {
    await givenAccounts(db.pool, "t3", [["settlement", "settlement"], ["erin", "customer"]]);
    const postings = Array.from({ length: 200 }, (_, i) => post(db.pool, transferOf("t3", `c:${i}`, "settlement", "erin", 3n)));
    const projectors = [0, 1].map(async () => {
      for (let round = 0; round < 20; round++) await advanceProjection(db.pool, "t3", { batchDeltasMax: 7 });
    });
    await Promise.all([...postings, ...projectors]);
    await advanceProjection(db.pool, "t3");
    expect((await balanceOf(db.pool, "t3", "erin"))?.balanceMinor).toBe(600n);
    expect(await entrySums(db.pool, "t3", "erin")).toEqual({ debitsMinor: 0n, creditsMinor: 600n });
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });

  it("reports ok on an untouched ledger, and names the account after the folded sums are tampered with", async () => {
    expect((await verifyLedger(db.pool)).ok).toBe(true);
    db.markTampered();
    await db.pool.query("UPDATE account_balance SET credits_minor = credits_minor + 1 WHERE tenant_id = 't1' AND account_id = 'alice'");
    const report = await verifyLedger(db.pool);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "LEDGER_PROJECTION_MISMATCH", tenantId: "t1", accountId: "alice" })]);
  });

  it("names the account when a delta row is deleted by hand", async () => {
    await post(db.pool, transferOf("t2", "s:lost", "settlement", "dave", 4n));
    db.markTampered();
    await db.pool.query("DELETE FROM balance_delta WHERE tenant_id = 't2' AND transfer_key = 's:lost' AND account_id = 'dave'");
    const report = await verifyLedger(db.pool);
    expect(report.problems).toEqual(expect.arrayContaining([expect.objectContaining({ code: "LEDGER_PROJECTION_MISMATCH", tenantId: "t2", accountId: "dave" })]));
  });
});
