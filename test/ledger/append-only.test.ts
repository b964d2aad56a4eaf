import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

describe("the ledger is append-only, enforced by the database", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"]]);
    const posted = await post(db.pool, transferOf("t1", "seed:1", "settlement", "alice", 500n));
    expect(posted).toEqual({ ok: true, value: "applied" });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("refuses an UPDATE of a ledger entry", async () => {
    await expect(db.pool.query("UPDATE ledger_entry SET amount_minor = 1 WHERE tenant_id = 't1'")).rejects.toThrow(/append-only/);
  });

  it("refuses a DELETE of a ledger entry", async () => {
    await expect(db.pool.query("DELETE FROM ledger_entry WHERE tenant_id = 't1'")).rejects.toThrow(/append-only/);
  });

  it("refuses an UPDATE or DELETE of a transfer", async () => {
    await expect(db.pool.query("UPDATE transfer SET kind = 'x'")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("DELETE FROM transfer")).rejects.toThrow(/append-only/);
  });

  it("refuses a TRUNCATE of the ledger", async () => {
    await expect(db.pool.query("TRUNCATE ledger_entry CASCADE")).rejects.toThrow(/append-only/);
  });
});
