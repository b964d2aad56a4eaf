import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceProjection } from "../../src/ledger/balance.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

describe("clearline ledger commands", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    await db.pool.query("INSERT INTO tenant (tenant_id, name, api_key_hash) VALUES ('acme', 'acme-by-name', 'x')");
    await givenAccounts(db.pool, "acme", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("acme", "i-1:credit", "settlement", "alice", 1234n));
    await advanceProjection(db.pool, "acme");
  });
  afterAll(async () => {
    await db.drop();
  });

  it("prints a balance as a decimal string in the account's currency", async () => {
    const run = await runCliInProcess(["balance", "--tenant", "acme", "--account", "alice", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ account: "alice", currency: "USD", balance: "12.34" });
  });

  it("takes the tenant's name as well as its id", async () => {
    const run = await runCliInProcess(["balance", "--tenant", "acme-by-name", "--account", "alice", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout).balance).toBe("12.34");
  });

  it("exits 2 with a one-line error for an unknown account", async () => {
    const run = await runCliInProcess(["balance", "--tenant", "acme", "--account", "nobody"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split("\n")).toEqual(["clearline: no account nobody for tenant acme"]);
  });

  it("exits 2 on bad usage", async () => {
    expect((await runCliInProcess(["no-such-command"], env)).exitCode).toBe(2);
    expect((await runCliInProcess(["balance", "--tenant", "acme"], env)).exitCode).toBe(2);
  });

  it("counts transfers by kind", async () => {
    const run = await runCliInProcess(["ledger", "stats", "--json"], env);
    expect(JSON.parse(run.stdout)).toEqual({ transfers_by_kind: { payment: 1 }, accounts_by_kind: { customer: 1, settlement: 1 }, entries: 2 });
  });

  it("verifies ok, then exits non-zero naming the account after the projection is tampered with", async () => {
    const clean = await runCliInProcess(["ledger", "verify", "--json"], env);
    expect(clean.exitCode).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, transfers: 1, entries: 2 });

    db.markTampered();
    await db.pool.query(`INSERT INTO account_balance (tenant_id, account_id, debits_minor, credits_minor) VALUES ('acme', 'settlement', 100, 0)
                         ON CONFLICT (tenant_id, account_id) DO UPDATE SET debits_minor = account_balance.debits_minor + 100`);
    const tampered = await runCliInProcess(["ledger", "verify", "--json"], env);
    expect(tampered.exitCode).toBe(1);
    expect(JSON.parse(tampered.stdout).problems).toEqual([expect.objectContaining({ code: "LEDGER_PROJECTION_MISMATCH", account_id: "settlement" })]);
  });
});
