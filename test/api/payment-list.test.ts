import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { insertPayments } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing payments over HTTP (issue 33 item 7): GET /v1/payments pages by cursor, the oldest
 * first, filtered by status and creation time; GET /v1/payments/{id} reads one.
 */
describe("the payment list and the payment by id", () => {
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

  it("pages through 10,000 payments with stable cursors while new ones arrive: none twice, none that existed skipped", async () => {
    const { tenantId, client } = await tenant("browse-payments");
    const existing = await insertPayments(db.pool, { tenantId, prefix: "pay_x", count: 10_000 });
    const { rows: [middle] } = await db.pool.query<{ at: string }>(
      "SELECT created_at::text AS at FROM payment WHERE tenant_id = $1 AND payment_id = 'pay_x05000'", [tenantId]);
    const path = `/v1/payments?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, idOf, existing, {
      after: (page) => insertPayments(db.pool, { tenantId, prefix: `pay_new${page}_`, count: 1, from: new Date().toISOString() }),
      // Dated before all of them, or among them: transactions that began long ago and commit now.
      before: (page) => insertPayments(db.pool, { tenantId, prefix: `pay_old${page}_`, count: 1, from: "2000-01-01" }),
      among: (page) => insertPayments(db.pool, { tenantId, prefix: `pay_mid${page}_`, count: 1, from: middle?.at ?? "" }),
    });
  });

  it("filters by status", async () => {
    const { tenantId, client } = await tenant("payments-status");
    await insertPayments(db.pool, { tenantId, prefix: "pay_s", count: 30 });
    const declined = await allIds(client, "/v1/payments?status=declined&limit=2", idOf);
    expect(declined).toEqual(["pay_s00010", "pay_s00020", "pay_s00030"]);
  });

  it("filters by creation time: created_from inclusive, created_before exclusive, a date being midnight UTC", async () => {
    const { tenantId, client } = await tenant("payments-created");
    await insertPayments(db.pool, { tenantId, prefix: "pay_a", count: 1, from: "2026-03-01T23:59:59.999Z" });
    await insertPayments(db.pool, { tenantId, prefix: "pay_b", count: 1, from: "2026-03-02T00:00:00Z" });
    await insertPayments(db.pool, { tenantId, prefix: "pay_c", count: 1, from: "2026-03-02T12:00:00+02:00" });
    await insertPayments(db.pool, { tenantId, prefix: "pay_d", count: 1, from: "2026-03-03T00:00:00Z" });
    const oneDay = await allIds(client, "/v1/payments?created_from=2026-03-02&created_before=2026-03-03", idOf);
    expect(oneDay).toEqual(["pay_b00001", "pay_c00001"]);
    const instant = await allIds(client, "/v1/payments?created_from=2026-03-02T10:00:00Z", idOf);
    expect(instant).toEqual(["pay_c00001", "pay_d00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds, an unknown status and a date that is none, with 400", async () => {
    const { client } = await tenant("payments-refusals");
    await expectQueriesRefused(client, "/v1/payments", ["cursor=bm90LWEtY3Vyc29y", "cursor=%2F%2F",
      `limit=${limits.http.listPageItemsMax + 1}`, "limit=0", "status=pending", "created_from=2026-02-30",
      "colour=red"]);
  });

  it("still answers one intent by client_reference, and refuses list parameters beside it", async () => {
    const { tenantId, client } = await tenant("payments-reference");
    await insertPayments(db.pool, { tenantId, prefix: "pay_r", count: 1 });
    const one = await client.get("/v1/payments?client_reference=ref-pay_r00001");
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: "pay_r00001", client_reference: "ref-pay_r00001" });
    const mixed = await client.get("/v1/payments?client_reference=ref-pay_r00001&status=declined");
    expect(mixed.status).toBe(400);
    expect(mixed.json.errors).toEqual([{ field: "status", message: "not with client_reference" }]);
  });

  it("reads one payment in the shape of its list item, and answers 404 for an unknown id and for another tenant's", async () => {
    const mine = await tenant("payments-mine");
    const theirs = await tenant("payments-theirs");
    await insertPayments(db.pool, { tenantId: mine.tenantId, prefix: "pay_m", count: 1 });
    await insertPayments(db.pool, { tenantId: theirs.tenantId, prefix: "pay_t", count: 1 });
    const listed = (await mine.client.get("/v1/payments")).json.data[0];
    const read = await mine.client.get("/v1/payments/pay_m00001");
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(Object.keys(read.json).sort()).toEqual(["amount", "client_reference", "created_at", "creditor_account",
      "currency", "debtor_account", "decline_code", "description", "id", "refunded_amount", "status"]);
    await expectNotFound(mine.client, ["pay_nobody", "pay_t00001"].map((id) => `/v1/payments/${id}`), "payment_not_found");
  });
});
