import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { createPartner } from "../../src/partners/partners.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { insertFiles, insertReviews } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing the review queue over HTTP (issue 33 item 7): GET /v1/reviews pages by cursor, the
 * oldest held first, filtered by state, reason, partner and time held; GET /v1/reviews/{id}.
 */
describe("the review list and the review item by id", () => {
  let db: TestDatabase;
  let api: TestApi;
  const idOf = (item: Record<string, unknown>) => String(item.review_id);
  const tenant = async (name: string) => {
    const given = await givenTenant(db.pool, name);
    const partner = await createPartner(db.pool, given.tenantId, `${name}-bank`);
    if (!partner.ok) throw new Error(partner.error.message);
    const partnerId = partner.value.partnerId;
    const [fileId = ""] = await insertFiles(db.pool, { tenantId: given.tenantId, partnerId, prefix: "fil_", count: 1 });
    const reviews = (rows: { prefix: string; count: number; from?: string; partnerId?: string }) =>
      insertReviews(db.pool, { tenantId: given.tenantId, partnerId, fileId, ...rows });
    return { ...given, partnerId, reviews, client: new ApiClient(api.baseUrl, given.apiKey) };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 review items with stable cursors while new ones are held: none twice, none that existed skipped", async () => {
    const { client, reviews } = await tenant("browse-reviews");
    const existing = await reviews({ prefix: "rev_x", count: 10_000 });
    const path = `/v1/reviews?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, idOf, existing, {
      after: (page) => reviews({ prefix: `rev_new${page}_`, count: 1, from: new Date().toISOString() }),
      before: (page) => reviews({ prefix: `rev_old${page}_`, count: 1, from: "2000-01-01" }),
    });
  });

  it("lists open items by default, and decided ones with state", async () => {
    const { tenantId, client, reviews } = await tenant("reviews-state");
    await reviews({ prefix: "rev_s", count: 3 });
    await db.pool.query(
      `UPDATE record_review SET state = 'refused', decision_reason = 'not ours', decided_at = now()
        WHERE tenant_id = $1 AND review_id = 'rev_s00002'`, [tenantId]);
    expect(await allIds(client, "/v1/reviews", idOf)).toEqual(["rev_s00001", "rev_s00003"]);
    expect(await allIds(client, "/v1/reviews?state=refused", idOf)).toEqual(["rev_s00002"]);
    expect(await allIds(client, "/v1/reviews?state=decided", idOf)).toEqual(["rev_s00002"]);
    expect(await allIds(client, "/v1/reviews?state=all", idOf)).toEqual(["rev_s00001", "rev_s00002", "rev_s00003"]);
  });

  it("filters by reason", async () => {
    const { client, reviews } = await tenant("reviews-reason");
    await reviews({ prefix: "rev_r", count: 20 });
    expect(await allIds(client, "/v1/reviews?reason=suspect", idOf)).toEqual(["rev_r00010", "rev_r00020"]);
  });

  it("filters by partner, named by its name or its id", async () => {
    const { tenantId, partnerId, client, reviews } = await tenant("reviews-partner");
    const other = await createPartner(db.pool, tenantId, "second-bank");
    if (!other.ok) throw new Error(other.error.message);
    await reviews({ prefix: "rev_a", count: 1 });
    await reviews({ prefix: "rev_b", count: 1, partnerId: other.value.partnerId });
    expect(await allIds(client, "/v1/reviews?partner=second-bank", idOf)).toEqual(["rev_b00001"]);
    expect(await allIds(client, `/v1/reviews?partner=${partnerId}`, idOf)).toEqual(["rev_a00001"]);
  });

  it("filters by the time an item was held", async () => {
    const { client, reviews } = await tenant("reviews-created");
    await reviews({ prefix: "rev_a", count: 1, from: "2026-07-01T09:00:00Z" });
    await reviews({ prefix: "rev_b", count: 1, from: "2026-07-02T09:00:00Z" });
    expect(await allIds(client, "/v1/reviews?created_from=2026-07-02", idOf)).toEqual(["rev_b00001"]);
    expect(await allIds(client, "/v1/reviews?created_before=2026-07-02", idOf)).toEqual(["rev_a00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds and an unknown state or reason, with 400", async () => {
    const { client } = await tenant("reviews-refusals");
    await expectQueriesRefused(client, "/v1/reviews", ["cursor=bm90LWEtY3Vyc29y", `limit=${limits.http.listPageItemsMax + 1}`, "state=closed", "reason=boredom"]);
  });

  it("reads one item in the shape of its list item, and answers 404 for an unknown id and for another tenant's", async () => {
    const mine = await tenant("reviews-mine");
    const theirs = await tenant("reviews-theirs");
    await mine.reviews({ prefix: "rev_m", count: 1 });
    await theirs.reviews({ prefix: "rev_t", count: 1 });
    const listed = (await mine.client.get("/v1/reviews")).json.data[0];
    const read = await mine.client.get("/v1/reviews/rev_m00001");
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(read.json).toMatchObject({ review_id: "rev_m00001", reason: "conflict", state: "open", amount_minor: "100" });
    await expectNotFound(mine.client, ["rev_nobody", "rev_t00001"].map((id) => `/v1/reviews/${id}`), "review_not_found");
  });
});
