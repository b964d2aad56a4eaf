import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compensateIncident } from "../../src/incidents/compensate.ts";
import { openIncident } from "../../src/incidents/perimeter.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { decideReview } from "../../src/records/review-decision.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, PAYEE_TWO_KEY } from "../files/support.ts";

// Payee two of original.ach is paid 200.00; corrected.ach says 205.00 under the same trace.
describe("an incident after a review's replace (docs/decisions/0015, item 8)", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("compensates a replaced record by undoing its replacement only: the original, compensated by the review under <transfer key>:compensate, is not compensated again", async () => {
    const scene = await givenScene(db.pool, "replaced");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:1000002", "payee-two");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "first.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "second.ach");
    const [item] = await listReviews(db.pool, { tenantId: scene.tenantId });
    if (!item) throw new Error("the changed record was not held");
    const replaced = await decideReview(db.pool, { tenantId: scene.tenantId, reviewId: item.review_id, decision: "replace", reason: "partner confirmed 205.00", operator: "ops-1" });
    expect(replaced.ok).toBe(true);
    const before = await balances(db.pool, scene.tenantId);
    expect(before["payee-two"]).toBe(20_500n);

    const incident = await openIncident(db.pool, scene.tenantId, "payee two", { since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date(Date.now() + 3_600_000).toISOString(), channel: "ach", keyPrefix: PAYEE_TWO_KEY }, "ops-1");
    if (!incident.ok) throw new Error(incident.error.message);
    const done = await compensateIncident(db.pool, { tenantId: scene.tenantId, incidentId: incident.value.incidentId, reason: "check", operator: "ops-1", dryRun: false });
    if (!done.ok) throw new Error(done.error.message);
    // The record's transfer is now the replacement (205.00); the original's 200.00 was compensated once, by the review.
    expect(done.value.compensations.map((c) => [c.transferKey, c.outcome])).toEqual([[`${PAYEE_TWO_KEY}:replace:${item.review_id}`, "posted"]]);
    expect((await balances(db.pool, scene.tenantId))["payee-two"]).toBe(0n);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key = $2", [scene.tenantId, `${PAYEE_TWO_KEY}:post:compensate`]);
    expect(rows[0]?.n).toBe(1);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });
});
