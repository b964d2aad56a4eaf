import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideReview } from "../../src/records/review-decision.ts";
import { listReviews, type ReviewItem } from "../../src/records/review-queue.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import {
  achFixtureDated, balances, fixture, givenScene, ingest, noOutcomes, settlementOf, suspenseOf, transferCount,
  type Scene,
} from "../files/support.ts";

/**
 * original.ach's entries have the effective entry date Wednesday 5 March 2025; payroll-returns.ach
 * returns two of them (R03 100.00, R01 300.00). Their deadline: the opening of business on the
 * second banking day after, Friday 7 March (docs/decisions/0094).
 */
function returnsDated(yymmdd: string): Buffer {
  return achFixtureDated("ach/payroll-returns.ach", yymmdd);
}

const operator = "ops-late-returns";

describe("return deadlines: a late ACH return is held for a person naming the missed deadline", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function givenOriginal(name: string): Promise<Scene> {
    const scene = await givenScene(db.pool, name);
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    return scene;
  }

  async function heldLate(scene: Scene): Promise<ReviewItem[]> {
    const report = await ingest(db.pool, scene, returnsDated("250310"), "returns-late.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, suspect: 2 });
    return listReviews(db.pool, { tenantId: scene.tenantId });
  }

  it("applies a return of the entry dated on its deadline: the money moves back", async () => {
    const scene = await givenOriginal("timely");
    const report = await ingest(db.pool, scene, returnsDated("250307"), "returns-timely.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    expect(await balances(db.pool, scene.tenantId))
      .toEqual({ [settlementOf(scene)]: 110_000n, [suspenseOf(scene)]: 110_000n });
  });

  it("holds a return of the same entry dated one banking day late, naming the deadline", async () => {
    const scene = await givenOriginal("late");
    const held = await heldLate(scene);
    expect(held.map((item) => item.reason)).toEqual(["late_return", "late_return"]);
    const byCode = held.map((item) => [item.detail?.slice(13, 16), item] as const);
    const missed = (code: string) => expect.stringMatching(new RegExp(
      `^late return: ${code} dated 2025-03-10 missed its deadline 2025-03-07 \\(two-banking-days`));
    expect(byCode.map(([code, item]) => [code, item.detail]).sort())
      .toEqual([["R01", missed("R01")], ["R03", missed("R03")]]);
    const r03 = byCode.find(([code]) => code === "R03")?.[1];
    expect(r03?.matched_ref).toBe("ach:23138010:231380100000001:1234567890:PPD:250305");
    // Nothing moved back: the original's 1,500.00 stands.
    expect(await balances(db.pool, scene.tenantId))
      .toEqual({ [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 150_000n });
    const { rows } = await db.pool.query<{ code: string }>(
      "SELECT code FROM record_outcome WHERE tenant_id = $1 AND file_id = $2",
      [scene.tenantId, held[0]?.file_id]);
    expect(rows.map((r) => r.code)).toEqual(["RECORD_RETURN_LATE", "RECORD_RETURN_LATE"]);
  });

  it("moves the money back when a person accepts the late return, once", async () => {
    const scene = await givenOriginal("late-accepted");
    const [first, second] = await heldLate(scene);
    for (const item of [first, second]) {
      const accepted = await decideReview(db.pool, {
        tenantId: scene.tenantId, reviewId: item?.review_id ?? "", decision: "apply_as_new",
        reason: "the ODFI agreed to take the return late", operator,
      });
      expect(accepted).toMatchObject({ ok: true, value: { decided: { state: "applied_as_new" } } });
    }
    expect(await balances(db.pool, scene.tenantId))
      .toEqual({ [settlementOf(scene)]: 110_000n, [suspenseOf(scene)]: 110_000n });
    // The original now counts as returned: a timely-looking return of it again is held.
    const again = await ingest(db.pool, scene, returnsDated("250306"), "returns-again.ach");
    expect(again.outcomes).toEqual({ ...noOutcomes, suspect: 2 });
  });

  it("refuses to accept a late return whose entry a timely return reversed meanwhile", async () => {
    const scene = await givenOriginal("late-overtaken");
    const [item] = await heldLate(scene);
    const timely = await ingest(db.pool, scene, returnsDated("250306"), "returns-timely.ach");
    expect(timely.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    const before = await transferCount(db.pool, scene.tenantId);
    const accepted = await decideReview(db.pool, {
      tenantId: scene.tenantId, reviewId: item?.review_id ?? "", decision: "apply_as_new",
      reason: "accept it late", operator,
    });
    expect(accepted).toMatchObject({ ok: false, error: {
      code: "REVIEW_NOT_APPLICABLE", message: expect.stringMatching(/returned meanwhile/),
    } });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(before);
  });

  it("posts nothing when a person refuses the late return, and replace has no meaning", async () => {
    const scene = await givenOriginal("late-refused");
    const [item] = await heldLate(scene);
    const request = { tenantId: scene.tenantId, reviewId: item?.review_id ?? "", operator };
    const replaced = await decideReview(db.pool,
      { ...request, decision: "replace", reason: "try to replace" });
    expect(replaced).toMatchObject({ ok: false, error: { code: "REVIEW_NOT_APPLICABLE" } });
    const before = await transferCount(db.pool, scene.tenantId);
    const refused = await decideReview(db.pool,
      { ...request, decision: "refuse", reason: "late: the RDFI has no right to return it" });
    expect(refused).toMatchObject({ ok: true, value: { decided: { state: "refused" } } });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(before);
    const { rows } = await db.pool.query<{ state: string }>(
      "SELECT state FROM record_key WHERE tenant_id = $1 AND natural_key = $2",
      [scene.tenantId, item?.natural_key]);
    expect(rows).toEqual([{ state: "refused" }]);
  });
});
