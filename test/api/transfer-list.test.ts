import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";
import { postFixtureTransfers } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing the ledger's transfers over HTTP (issue 33 item 7): GET /v1/transfers pages by cursor
 * in posting order, filtered by kind, value date and posting time; GET /v1/transfers/{key}.
 */
describe("the transfer list and the transfer by key", () => {
  let db: TestDatabase;
  let api: TestApi;
  const idOf = (item: Record<string, unknown>) => String(item.key);
  const tenant = async (name: string) => {
    const given = await givenTenant(db.pool, name);
    await givenAccounts(db.pool, given.tenantId, [["bank-a", "settlement"], ["bank-b", "settlement"]]);
    const post = (prefix: string, count: number, extra = {}) =>
      postFixtureTransfers(db.pool, { tenantId: given.tenantId, prefix, count, perTransaction: 1_000 }, extra);
    return { ...given, post, client: new ApiClient(api.baseUrl, given.apiKey) };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 transfers with stable cursors while new ones are posted: none twice, none that existed skipped", async () => {
    const { client, post } = await tenant("browse-transfers");
    const existing = await post("tr:x:", 10_000);
    const path = `/v1/transfers?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, idOf, existing, {
      // Posted between pages, with keys that sort before and after every existing one: both
      // come after them, in posting order.
      after: async (page) => [...await post(`tr:new${page}:`, 1), ...await post(`a:new${page}:`, 1)],
    });
  });

  it("filters by kind", async () => {
    const { client, post } = await tenant("transfers-kind");
    await post("pay:", 2);
    await post("refund:", 2, { kind: "refund" });
    expect(await allIds(client, "/v1/transfers?kind=refund", idOf)).toEqual(["refund:00001", "refund:00002"]);
  });

  it("filters by value date, both ends inclusive", async () => {
    const { client, post } = await tenant("transfers-value-date");
    await post("d1:", 1, { valueDate: "2026-12-01", settlementDate: "2026-12-01" });
    await post("d2:", 1, { valueDate: "2026-12-02", settlementDate: "2026-12-02" });
    await post("d3:", 1, { valueDate: "2026-12-03", settlementDate: "2026-12-03" });
    expect(await allIds(client, "/v1/transfers?value_from=2026-12-02&value_to=2026-12-02", idOf)).toEqual(["d2:00001"]);
    expect(await allIds(client, "/v1/transfers?value_from=2026-12-02", idOf)).toEqual(["d2:00001", "d3:00001"]);
  });

  it("filters by posting time", async () => {
    const { client, post } = await tenant("transfers-posted");
    await post("before:", 1);
    const { rows: [between] } = await db.pool.query<{ at: string }>("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS at");
    await post("after:", 1);
    const at = encodeURIComponent(between?.at ?? "");
    expect(await allIds(client, `/v1/transfers?created_from=${at}`, idOf)).toEqual(["after:00001"]);
    expect(await allIds(client, `/v1/transfers?created_before=${at}`, idOf)).toEqual(["before:00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds and a value date that is none, with 400", async () => {
    const { client } = await tenant("transfers-refusals");
    await expectQueriesRefused(client, "/v1/transfers", ["cursor=bm90LWEtY3Vyc29y", `limit=${limits.http.listPageItemsMax + 1}`, "value_from=2026-13-01"]);
  });

  it("reads one transfer with its legs in the shape of its list item, and answers 404 for an unknown key and for another tenant's", async () => {
    const mine = await tenant("transfers-mine");
    const theirs = await tenant("transfers-theirs");
    await mine.post("api:order-1:", 1);
    await theirs.post("api:order-9:", 1);
    const listed = (await mine.client.get("/v1/transfers")).json.data[0];
    const read = await mine.client.get(`/v1/transfers/${encodeURIComponent("api:order-1:00001")}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(read.json).toMatchObject({
      key: "api:order-1:00001", kind: "payment", value_date: "2026-12-02",
      legs: [
        { account: "bank-a", direction: "debit", amount: "1.00", currency: "USD" },
        { account: "bank-b", direction: "credit", amount: "1.00", currency: "USD" },
      ],
    });
    await expectNotFound(mine.client, ["api:nobody:debit", "api:order-9:00001"].map((key) => `/v1/transfers/${encodeURIComponent(key)}`), "transfer_not_found");
  });
});
