import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

/**
 * `clearline balance --as-of D --kind K` (docs/decisions/0102): 12.34 settled on Wednesday, and
 * 5.00 booked on Saturday 5 December 2026 that settles on Monday 7 December.
 */
describe("clearline balance on a date", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    await db.pool.query("INSERT INTO tenant (tenant_id, name, api_key_hash) VALUES ('acme', 'acme-by-name', 'x')");
    await givenAccounts(db.pool, "acme", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("acme", "wed", "settlement", "alice", 1234n));
    await post(db.pool, transferOf("acme", "sat", "settlement", "alice", 500n,
      { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
  });
  afterAll(async () => {
    await db.drop();
  });

  const on = async (kind: string, day = "2026-12-05") => {
    const run = await runCliInProcess(["balance", "--tenant", "acme", "--account", "alice",
      "--as-of", day, "--kind", kind, "--json"], env);
    expect(run.exitCode).toBe(0);
    return JSON.parse(run.stdout) as Record<string, string>;
  };

  it("prints the booked balance on a date, the Saturday credit in it", async () => {
    expect(await on("booked")).toMatchObject({ as_of: "2026-12-05", kind: "booked", balance: "17.34" });
  });

  it("prints the settled balance on the same date without the credit that settles Monday", async () => {
    expect(await on("settled")).toMatchObject({ kind: "settled", balance: "12.34" });
    expect((await on("settled", "2026-12-07")).balance).toBe("17.34");
  });

  it("exits 2 naming the code for a balance kind it does not know", async () => {
    const run = await runCliInProcess(["balance", "--tenant", "acme", "--account", "alice",
      "--as-of", "2026-12-05", "--kind", "pending"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("LEDGER_BALANCE_KIND_UNKNOWN");
  });

  it("exits 2 naming the code for an as-of date that is none", async () => {
    const run = await runCliInProcess(["balance", "--tenant", "acme", "--account", "alice",
      "--as-of", "2026-13-01"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("CALENDAR_DATE_INVALID");
  });

  it("names an account's available rule, and the available balance follows it", async () => {
    expect((await on("available")).balance).toBe("17.34");
    const set = await runCliInProcess(["ledger", "available-rule", "--tenant", "acme",
      "--account", "alice", "--rule", "settled-credits"], env);
    expect(set.exitCode).toBe(0);
    expect(await on("available")).toMatchObject({ available_rule: "settled-credits", balance: "12.34" });
  });
});
