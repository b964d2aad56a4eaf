import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { listAccounts } from "../../src/ledger/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";

describe("listAccounts", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 2 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("lists a tenant's accounts by id, with kind and currency, and no other tenant's", async () => {
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"]]);
    await givenAccounts(db.pool, "t2", [["bob", "customer"]]);
    expect(await listAccounts(db.pool, "t1")).toEqual([
      { tenantId: "t1", accountId: "alice", kind: "customer", currency: "USD" },
      { tenantId: "t1", accountId: "settlement", kind: "settlement", currency: "USD" },
    ]);
  });

  it(`lists ${limits.ledger.accountsListedMax} accounts of a tenant with one more`, async () => {
    const accountsMax = limits.ledger.accountsListedMax;
    await db.pool.query(
      `INSERT INTO account (tenant_id, account_id, kind, currency)
       SELECT 't3', 'acct-' || lpad(n::text, 5, '0'), 'customer', 'USD'
         FROM generate_series(1, $1::int) AS n`, [accountsMax + 1]);
    const listed = await listAccounts(db.pool, "t3");
    expect(listed.length).toBe(accountsMax);
    expect(listed.at(-1)?.accountId).toBe(`acct-${String(accountsMax).padStart(5, "0")}`);
  });
});
