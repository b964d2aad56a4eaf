import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { insertRefunds } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing refunds over HTTP (issue 33 item 7): GET /v1/refunds pages by cursor, the oldest
 * first, filtered by status, payment and creation time; GET /v1/refunds/{id} reads one.
 */
describe("the refund list and the refund by id", () => {
  let db: TestDatabase;
  let api: TestApi;
  const idOf = (item: Record<string, unknown>) => String(item.id);
  const tenant = async (name: string) => {
    const given = await givenTenant(db.pool, name);
    return { ...given, client: new ApiClient(api.baseUrl, given.apiKey) };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 refunds with stable cursors while new ones arrive: none twice, none that existed skipped", async () => {
    const { tenantId, client } = await tenant("browse-refunds");
    const paymentId = "pay_refunded";
    const existing = await insertRefunds(db.pool, { tenantId, paymentId, prefix: "ref_x", count: 10_000 });
    const path = `/v1/refunds?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, idOf, existing, {
      after: (page) => insertRefunds(db.pool, { tenantId, paymentId, prefix: `ref_new${page}_`, count: 1, from: new Date().toISOString() }),
      before: (page) => insertRefunds(db.pool, { tenantId, paymentId, prefix: `ref_old${page}_`, count: 1, from: "2000-01-01" }),
    });
  });

  it("filters by status", async () => {
    const { tenantId, client } = await tenant("refunds-status");
    await insertRefunds(db.pool, { tenantId, paymentId: "pay_1", prefix: "ref_s", count: 20 });
    expect(await allIds(client, "/v1/refunds?status=declined", idOf)).toEqual(["ref_s00010", "ref_s00020"]);
  });

  it("filters by payment", async () => {
    const { tenantId, client } = await tenant("refunds-payment");
    await insertRefunds(db.pool, { tenantId, paymentId: "pay_1", prefix: "ref_a", count: 2 });
    await insertRefunds(db.pool, { tenantId, paymentId: "pay_2", prefix: "ref_b", count: 2 });
    expect(await allIds(client, "/v1/refunds?payment_id=pay_2", idOf)).toEqual(["ref_b00001", "ref_b00002"]);
  });

  it("filters by creation time", async () => {
    const { tenantId, client } = await tenant("refunds-created");
    await insertRefunds(db.pool, { tenantId, paymentId: "pay_1", prefix: "ref_a", count: 1, from: "2026-05-01T10:00:00Z" });
    await insertRefunds(db.pool, { tenantId, paymentId: "pay_1", prefix: "ref_b", count: 1, from: "2026-05-02T10:00:00Z" });
    expect(await allIds(client, "/v1/refunds?created_from=2026-05-02", idOf)).toEqual(["ref_b00001"]);
    expect(await allIds(client, "/v1/refunds?created_before=2026-05-02", idOf)).toEqual(["ref_a00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds and an unknown status, with 400", async () => {
    const { client } = await tenant("refunds-refusals");
    await expectQueriesRefused(client, "/v1/refunds", ["cursor=bm90LWEtY3Vyc29y", `limit=${limits.http.listPageItemsMax + 1}`, "status=pending"]);
  });

  it("reads one refund in the shape of its list item, and answers 404 for an unknown id and for another tenant's", async () => {
    const mine = await tenant("refunds-mine");
    const theirs = await tenant("refunds-theirs");
    await insertRefunds(db.pool, { tenantId: mine.tenantId, paymentId: "pay_1", prefix: "ref_m", count: 1 });
    await insertRefunds(db.pool, { tenantId: theirs.tenantId, paymentId: "pay_1", prefix: "ref_t", count: 1 });
    const listed = (await mine.client.get("/v1/refunds")).json.data[0];
    const read = await mine.client.get("/v1/refunds/ref_m00001");
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(read.json).toMatchObject({ id: "ref_m00001", payment_id: "pay_1", amount: "0.01", currency: "USD" });
    await expectNotFound(mine.client, ["ref_nobody", "ref_t00001"].map((id) => `/v1/refunds/${id}`), "refund_not_found");
  });
});
