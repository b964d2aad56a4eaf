import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";

/**
 * GET /v1/accounts/{id}/balance with as_of and kind (docs/decisions/0102): a credit booked on
 * Saturday 5 December 2026 that settles on Monday 7 December.
 */
describe("an account's balance on a date over HTTP", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "balance-on-date");
    await post(db.pool, transferOf(world.tenantId, "sat", "settlement", "alice", 250n,
      { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  const get = (query: string) => world.client.get(`/v1/accounts/alice/balance${query}`);

  it("answers the booked and the settled balance of one date apart", async () => {
    const booked = await get("?as_of=2026-12-05&kind=booked");
    const settled = await get("?as_of=2026-12-05&kind=settled");
    expect([booked.status, booked.json.balance]).toEqual([200, "2.50"]);
    expect([settled.status, settled.json.balance]).toEqual([200, "0.00"]);
    expect(settled.json).toMatchObject({
      account: "alice", currency: "USD", as_of: "2026-12-05", kind: "settled",
      available_rule: "booked", booked: "2.50", settled: "0.00", available: "2.50",
    });
  });

  it("answers the settled balance once the settlement date is reached", async () => {
    const settled = await get("?as_of=2026-12-07&kind=settled");
    expect(settled.json.balance).toBe("2.50");
  });

  it("keeps today's exact balance without as_of or kind", async () => {
    const today = await get("");
    expect(today.json).toEqual({ account: "alice", currency: "USD", balance: "2.50" });
  });

  it("refuses a date that is none with 400", async () => {
    const refused = await get("?as_of=2026-02-30&kind=booked");
    expect(refused.status).toBe(400);
  });

  it("refuses a kind it does not know with 400", async () => {
    const refused = await get("?as_of=2026-12-05&kind=pending");
    expect(refused.status).toBe(400);
  });
});
