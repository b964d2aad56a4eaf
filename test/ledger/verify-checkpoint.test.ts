import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { advanceProjection } from "../../src/ledger/balance.ts";
import { postTransfer } from "../../src/ledger/post-transfers.ts";
import { verifyLedger, type VerifyReport } from "../../src/ledger/verify.ts";
import { openTransaction } from "../../src/db/transaction.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

const incremental = { mode: "incremental", writeCheckpoint: true } as const;
const full = { mode: "full", writeCheckpoint: true } as const;

const codes = (report: VerifyReport) => report.problems.map((p) => `${p.code} ${p.accountId ?? p.transferKey ?? ""}`);

/** Changes rows the ledger's triggers refuse to change: as a superuser, triggers off. */
async function tamper(db: TestDatabase, sql: string): Promise<void> {
  db.markTampered();
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL session_replication_role = replica");
    await client.query(sql);
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}

async function postPayments(db: TestDatabase, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await post(db.pool, transferOf("t1", `${prefix}:${i}`, "settlement", "alice", 100n));
}

describe("ledger verify from a checkpoint (incremental) and of the checkpoint (full)", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    await postPayments(db, "old", 3);
  });
  afterEach(async () => { await db.drop(); });

  it("reads only the transfers new since the checkpoint, and carries the totals and sums on", async () => {
    const first = await verifyLedger(db.pool, full);
    expect(first).toMatchObject({ ok: true, mode: "full", transfers: 3, entries: 6, checkpointsWritten: 1 });
    await postPayments(db, "new", 2);
    await advanceProjection(db.pool, "t1");
    const second = await verifyLedger(db.pool, incremental);
    expect(second).toMatchObject({
      ok: true, mode: "incremental", transfers: 5, entries: 10, tenantsWithCheckpoint: 1,
      newSinceCheckpoint: { transfers: 2, entries: 4 }, checkpointsWritten: 1,
    });
    const third = await verifyLedger(db.pool, incremental);
    expect(third).toMatchObject({ ok: true, transfers: 5, entries: 10, newSinceCheckpoint: { transfers: 0, entries: 0 } });
    expect(await verifyLedger(db.pool, full)).toMatchObject({ ok: true, transfers: 5, entries: 10, problems: [] });
  });

  it("starts from nothing for a tenant without a checkpoint, and gives each tenant its own", async () => {
    await givenAccounts(db.pool, "t2", [["settlement", "settlement"], ["carol", "customer"]]);
    await post(db.pool, transferOf("t2", "p:1", "settlement", "carol", 5n));
    const report = await verifyLedger(db.pool, incremental);
    expect(report).toMatchObject({ ok: true, tenants: 2, transfers: 4, newSinceCheckpoint: { transfers: 4, entries: 8 }, checkpointsWritten: 2 });
    const rows = await db.pool.query("SELECT tenant_id, checkpoint_no, transfers, entries FROM ledger_verify_checkpoint ORDER BY 1");
    expect(rows.rows).toEqual([
      { tenant_id: "t1", checkpoint_no: 1n, transfers: 3n, entries: 6n },
      { tenant_id: "t2", checkpoint_no: 1n, transfers: 1n, entries: 2n },
    ]);
  });

  it("counts a transfer whose transaction began before the checkpoint and committed after it as new", async () => {
    const late = await openTransaction(db.pool);
    const posted = await postTransfer(late.tx, transferOf("t1", "late:1", "settlement", "alice", 7n));
    expect(posted.ok).toBe(true);
    expect(await verifyLedger(db.pool, incremental)).toMatchObject({ ok: true, transfers: 3 });
    await late.commit();
    const report = await verifyLedger(db.pool, incremental);
    expect(report).toMatchObject({ ok: true, transfers: 4, newSinceCheckpoint: { transfers: 1, entries: 2 } });
    expect(await verifyLedger(db.pool, full)).toMatchObject({ ok: true, transfers: 4, entries: 8 });
  });

  it("catches a fault in an entry new since the checkpoint", async () => {
    await verifyLedger(db.pool, full);
    await postPayments(db, "new", 2);
    await tamper(db, "UPDATE ledger_entry SET amount_minor = 90 WHERE tenant_id = 't1' AND transfer_key = 'new:1' AND direction = 'C'");
    const report = await verifyLedger(db.pool, incremental);
    expect(report.ok).toBe(false);
    expect(codes(report)).toEqual(["LEDGER_TRANSFER_UNBALANCED_STORED new:1", "LEDGER_PROJECTION_MISMATCH alice"]);
    expect(report.checkpointsWritten).toBe(0);
  });

  it("does not see a changed entry older than the checkpoint; the full run does, through the checkpoint", async () => {
    await verifyLedger(db.pool, full);
    await tamper(db, "UPDATE ledger_entry SET amount_minor = 90 WHERE tenant_id = 't1' AND transfer_key = 'old:1' AND direction = 'C'");
    expect(await verifyLedger(db.pool, { mode: "incremental" })).toMatchObject({ ok: true, problems: [] });
    const report = await verifyLedger(db.pool, full);
    expect(codes(report)).toEqual([
      "LEDGER_TRANSFER_UNBALANCED_STORED old:1", "LEDGER_PROJECTION_MISMATCH alice", "LEDGER_CHECKPOINT_MISMATCH alice",
    ]);
    expect(report.checkpointsWritten).toBe(0);
  });

  it("catches, in the full run only, a balanced pair of entries added to an old transfer behind the triggers", async () => {
    await verifyLedger(db.pool, full);
    await tamper(db, `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
                      VALUES ('t1', 'old:0#8', 'old:0', 'bob', 'D', 50, 'USD', '2026-12-02'), ('t1', 'old:0#9', 'old:0', 'alice', 'C', 50, 'USD', '2026-12-02')`);
    expect(await verifyLedger(db.pool, { mode: "incremental" })).toMatchObject({ ok: true });
    const report = await verifyLedger(db.pool, full);
    expect(codes(report)).toEqual(expect.arrayContaining([
      "LEDGER_CHECKPOINT_MISMATCH alice", "LEDGER_CHECKPOINT_MISMATCH bob", "LEDGER_NEGATIVE_CUSTOMER_BALANCE bob",
    ]));
    expect(report.problems.filter((p) => p.code === "LEDGER_CHECKPOINT_MISMATCH" && p.accountId === undefined)).toHaveLength(1);
  });

  it("names the account when the checkpoint's own sums are changed: the full run and the next incremental one", async () => {
    await verifyLedger(db.pool, full);
    await tamper(db, "UPDATE ledger_verify_account SET credits_minor = credits_minor + 1 WHERE tenant_id = 't1' AND account_id = 'alice'");
    expect(codes(await verifyLedger(db.pool, { mode: "incremental" }))).toEqual(["LEDGER_PROJECTION_MISMATCH alice"]);
    expect(codes(await verifyLedger(db.pool, { mode: "full" }))).toEqual(["LEDGER_CHECKPOINT_MISMATCH alice"]);
  });

  it("refuses a change or removal of a checkpoint", async () => {
    await verifyLedger(db.pool, full);
    await expect(db.pool.query("UPDATE ledger_verify_checkpoint SET entries = 0")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("DELETE FROM ledger_verify_checkpoint")).rejects.toThrow(/append-only/);
  });
});
