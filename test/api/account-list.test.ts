import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { openAccount } from "../../src/ledger/index.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * Browsing accounts over HTTP (issue 33 item 7): GET /v1/accounts pages by cursor, GET
 * /v1/accounts/{id} reads one.
 */
describe("the account list and the account by id", () => {
  let db: TestDatabase;
  let api: TestApi;
  let client: ApiClient;
  let tenantId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
    const tenant = await givenTenant(db.pool, "browse");
    tenantId = tenant.tenantId;
    client = new ApiClient(api.baseUrl, tenant.apiKey);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 accounts with stable cursors while new ones arrive: none twice, none that existed skipped", async () => {
    // Set up in one statement: opening 10,000 accounts one by one is not what this test is about.
    await db.pool.query(
      `INSERT INTO account (tenant_id, account_id, kind, currency)
       SELECT $1, 'acct-' || lpad(g::text, 5, '0'), 'customer', 'USD' FROM generate_series(1, 10000) g`,
      [tenantId]);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let arrivals = 0;
    do {
      const page = await client.get(`/v1/accounts?limit=${limits.ledger.accountsPageMax}${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...(page.json.data as Array<{ id: string }>).map((a) => a.id));
      cursor = page.json.next_cursor as string | null;
      expect(page.json.has_more).toBe(cursor !== null);
      pages++;
      // New accounts arrive between pages, before and after the cursor.
      for (const id of [`acct-0000${pages}-late`, `acct-${String(9_000 + pages)}-late`, `zz-late-${pages}`]) {
        const opened = await openAccount(db.pool, { tenantId, accountId: id, kind: "customer", currency: "USD" });
        expect(opened.ok).toBe(true);
        arrivals++;
      }
    } while (cursor !== null);
    const distinct = new Set(seen);
    expect(distinct.size).toBe(seen.length);
    const skipped = Array.from({ length: 10_000 }, (_, i) => `acct-${String(i + 1).padStart(5, "0")}`)
      .filter((id) => !distinct.has(id));
    expect(skipped).toEqual([]);
    expect(seen.length).toBeLessThanOrEqual(10_000 + arrivals);
    expect(pages).toBeGreaterThanOrEqual(10);
  });

  it("filters by kind", async () => {
    await openAccount(db.pool, { tenantId, accountId: "bank-1", kind: "settlement", currency: "USD" });
    const page = await client.get("/v1/accounts?kind=settlement");
    expect(page.status).toBe(200);
    expect(page.json.data).toEqual([{ id: "bank-1", kind: "settlement", currency: "USD" }]);
    expect(page.json).toMatchObject({ has_more: false, next_cursor: null });
  });

  it("refuses a cursor it did not give out, a limit out of bounds and an unknown kind, with 400", async () => {
    for (const query of ["cursor=bm90LWEtY3Vyc29y", "cursor=%2F%2F", `limit=${limits.ledger.accountsPageMax + 1}`, "limit=0", "kind=piggybank"]) {
      const answer = await client.get(`/v1/accounts?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.json.code, query).toBe("request_invalid");
    }
  });

  it("reads one account with its kind, currency and balance, and answers 404 for an unknown one", async () => {
    await openAccount(db.pool, { tenantId, accountId: "alice", kind: "customer", currency: "USD" });
    const alice = await client.get("/v1/accounts/alice");
    expect(alice.status).toBe(200);
    expect(alice.json).toEqual({ id: "alice", kind: "customer", currency: "USD", balance: "0.00" });
    const nobody = await client.get("/v1/accounts/nobody");
    expect(nobody.status).toBe(404);
    expect(nobody.json.code).toBe("account_not_found");
  });
});
