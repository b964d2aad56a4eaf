import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceProjection } from "../../src/ledger/balance.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { entrySums, runConcurrently } from "../support/money.ts";

/**
 * Regression (issue 10, defect 1): 64 concurrent clients spent 1,301.00 from a balance of
 * 1,000.00, because the balance projection (an xid8 watermark) skipped committed entries and the
 * funds check read that projection. The projection runs all along here, as the service's job does.
 */
describe("the funds check under 64 concurrent clients", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 24 });
    world = await givenApiWorld(db.pool, "overdraft");
    await fund(world.client, "alice", "300.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("lets exactly as many 1.00 payments through as the balance covers, while the projection advances", async () => {
    const client = world.client.singleSend();
    let paying = true;
    const projector = (async () => {
      while (paying) await advanceProjection(db.pool, world.tenantId);
    })();
    const statuses = await runConcurrently(600, 64, async (i) => {
      const response = await client.post("/v1/payments", paymentRequest(`spend-${i}`, "1.00"), { "idempotency-key": randomUUID() });
      return response.status === 422 ? `${response.status} ${response.json.code}` : String(response.status);
    });
    paying = false;
    await projector;

    const counts = new Map<string, number>();
    for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ "201": 300, "422 insufficient_funds": 300 });
    expect((await world.client.get("/v1/accounts/alice/balance")).json.balance).toBe("0.00");
    expect(await entrySums(db.pool, world.tenantId, "alice")).toEqual({ debitsMinor: 30_000n, creditsMinor: 30_000n });
    const report = await verifyLedger(db.pool);
    expect(report.problems).toEqual([]);
  }, 600_000); // waits for 600 responses; a busy machine may take minutes, an idle one 15 s
});
