import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerReconciliationRoutes } from "../../src/api/routes/reconciliations.ts";
import { limits } from "../../src/config/limits.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";
import { insertDifferences } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing reconciliation differences over HTTP (issue 33 item 7): GET
 * /v1/reconciliations/differences pages by cursor, the oldest found first, filtered by state,
 * reason, account and the time a run found them; GET /v1/reconciliations/differences/{id}.
 */
describe("the difference list and the difference by id", () => {
  let db: TestDatabase;
  let api: TestApi;
  const path = "/v1/reconciliations/differences";
  const idOf = (item: Record<string, unknown>) => String(item.difference_id);
  const tenant = async (name: string) => {
    const given = await givenTenant(db.pool, name);
    await givenAccounts(db.pool, given.tenantId, [["bank-usd", "settlement"], ["bank-two", "settlement"]]);
    const differences = (rows: { prefix: string; count: number; from?: string; accountId?: string }) =>
      insertDifferences(db.pool, { tenantId: given.tenantId, accountId: "bank-usd", ...rows });
    return { ...given, differences, client: new ApiClient(api.baseUrl, given.apiKey) };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool, [(app) => registerReconciliationRoutes(app, { pool: db.pool })]);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 differences with stable cursors while runs find new ones: none twice, none that existed skipped", async () => {
    const { client, differences } = await tenant("browse-differences");
    const existing = await differences({ prefix: "dif_x", count: 10_000 });
    await expectStablePagingWhileItemsArrive(client, `${path}?limit=${limits.http.listPageItemsMax}`, idOf, existing, {
      after: (page) => differences({ prefix: `dif_new${page}_`, count: 1, from: new Date().toISOString() }),
      before: (page) => differences({ prefix: `dif_old${page}_`, count: 1, from: "2000-01-01" }),
    });
  });

  it("lists open differences by default, and decided ones with state", async () => {
    const { tenantId, client, differences } = await tenant("differences-state");
    await differences({ prefix: "dif_s", count: 3 });
    await db.pool.query(
      `UPDATE recon_difference SET state = 'explained', decided_by = 'ann', decision_reason = 'bank fee', decided_at = now()
        WHERE tenant_id = $1 AND difference_id = 'dif_s00002'`, [tenantId]);
    expect(await allIds(client, path, idOf)).toEqual(["dif_s00001", "dif_s00003"]);
    expect(await allIds(client, `${path}?state=explained`, idOf)).toEqual(["dif_s00002"]);
    expect(await allIds(client, `${path}?state=all`, idOf)).toEqual(["dif_s00001", "dif_s00002", "dif_s00003"]);
  });

  it("filters by reason", async () => {
    const { client, differences } = await tenant("differences-reason");
    await differences({ prefix: "dif_r", count: 20 });
    expect(await allIds(client, `${path}?reason=ours_only`, idOf)).toEqual(["dif_r00010", "dif_r00020"]);
  });

  it("filters by account", async () => {
    const { client, differences } = await tenant("differences-account");
    await differences({ prefix: "dif_a", count: 1 });
    await differences({ prefix: "dif_b", count: 1, accountId: "bank-two" });
    expect(await allIds(client, `${path}?account=bank-two`, idOf)).toEqual(["dif_b00001"]);
  });

  it("filters by the time a run first found them", async () => {
    const { client, differences } = await tenant("differences-found");
    await differences({ prefix: "dif_a", count: 1, from: "2026-08-01T09:00:00Z" });
    await differences({ prefix: "dif_b", count: 1, from: "2026-08-02T09:00:00Z" });
    expect(await allIds(client, `${path}?created_from=2026-08-02`, idOf)).toEqual(["dif_b00001"]);
    expect(await allIds(client, `${path}?created_before=2026-08-02`, idOf)).toEqual(["dif_a00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds and an unknown state or reason, with 400", async () => {
    const { client } = await tenant("differences-refusals");
    await expectQueriesRefused(client, path, ["cursor=bm90LWEtY3Vyc29y", `limit=${limits.http.listPageItemsMax + 1}`, "state=closed", "reason=rounding"]);
  });

  it("reads one difference in the shape of its list item, and answers 404 for an unknown id and for another tenant's", async () => {
    const mine = await tenant("differences-mine");
    const theirs = await tenant("differences-theirs");
    await mine.differences({ prefix: "dif_m", count: 1 });
    await theirs.differences({ prefix: "dif_t", count: 1 });
    const listed = (await mine.client.get(path)).json.data[0];
    const read = await mine.client.get(`${path}/dif_m00001`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(read.json).toMatchObject({ difference_id: "dif_m00001", account_id: "bank-usd", reason: "theirs_only", state: "open", delta_minor: "1", currency: "USD" });
    await expectNotFound(mine.client, ["dif_nobody", "dif_t00001"].map((id) => `${path}/${id}`), "recon_difference_unknown");
  });
});
