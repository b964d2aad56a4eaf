import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { accountStatement } from "../../src/ledger/statement.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { decideReview, type ReviewDecisionKind } from "../../src/records/review-decision.ts";
import { compensations } from "../../src/observability/metrics.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, settlementOf, type Scene, PAYEE_TWO_KEY } from "./support.ts";

// Payee two of original.ach is paid 200.00; corrected.ach says 205.00 under the same trace
// (original-amount-changed.ach too, with the original's file identity).
const PAYEE_TWO_ALIAS = "aba:021000021:1000002";
async function givenHeld(db: TestDatabase, name: string, first = "ach/original.ach", second = "ach/corrected.ach"): Promise<{ scene: Scene; reviewId: string }> {
  const scene = await givenScene(db.pool, name);
  await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD" });
  await addAccountAlias(db.pool, scene.tenantId, PAYEE_TWO_ALIAS, "payee-two");
  await ingest(db.pool, scene, fixture(first), "first.ach");
  await ingest(db.pool, scene, fixture(second), "second.ach");
  const [item] = await listReviews(db.pool, { tenantId: scene.tenantId });
  if (!item) throw new Error("the changed record was not held");
  return { scene, reviewId: item.review_id };
}

function decide(db: TestDatabase, scene: Scene, reviewId: string, decision: ReviewDecisionKind, operator = "ops-1") {
  return decideReview(db.pool, { tenantId: scene.tenantId, reviewId, decision, reason: "partner confirmed 205.00", operator });
}

async function payeeTwo(db: TestDatabase, scene: Scene): Promise<bigint | undefined> {
  return (await balances(db.pool, scene.tenantId))["payee-two"];
}

async function transfersOfKind(db: TestDatabase, scene: Scene, kind: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ transfer_key: string }>("SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND kind = $2 ORDER BY transfer_key", [scene.tenantId, kind]);
  return rows.map((r) => r.transfer_key);
}

async function compensationsCounted(): Promise<number> {
  return (await compensations.get()).values.find((v) => v.labels.reason === "review_replace")?.value ?? 0;
}

describe("review decisions: what each one does to the ledger", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("leaves the payee at exactly 205.00, not 405.00, when a 205.00 correction of a 200.00 payment replaces it (regression: release posted both)", async () => {
    const { scene, reviewId } = await givenHeld(db, "regression405");
    expect(await payeeTwo(db, scene)).toBe(20_000n);
    const decided = await decide(db, scene, reviewId, "replace");
    expect(decided).toMatchObject({ ok: true, value: { decided: {
      state: "replaced", operator: "ops-1", original_transfer_key: `${PAYEE_TWO_KEY}:post`,
      compensation_key: `${PAYEE_TWO_KEY}:post:compensate`, posting_key: `${PAYEE_TWO_KEY}:replace:${reviewId}`,
    } } });
    expect(await payeeTwo(db, scene)).toBe(20_500n);
    expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(210_500n);   // 1,500.00 + 600.00 new - 200.00 + 205.00
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("posts one compensation when replace is repeated and when two replaces run at once", async () => {
    const { scene, reviewId } = await givenHeld(db, "repeat");
    const [one, two] = await Promise.all([decide(db, scene, reviewId, "replace", "ops-1"), decide(db, scene, reviewId, "replace", "ops-2")]);
    const again = await decide(db, scene, reviewId, "replace", "ops-3");
    expect([one.ok, two.ok, again.ok]).toEqual([true, true, true]);
    const answers = [one, two, again].map((r) => (r.ok ? r.value.decided : undefined));
    expect(new Set(answers.map((a) => a?.operator)).size).toBe(1);   // every answer is the one stored decision
    expect([one, two, again].map((r) => (r.ok ? r.value.compensationsPosted : -1)).sort()).toEqual([0, 0, 1]);
    expect(await transfersOfKind(db, scene, "correction-compensation")).toEqual([`${PAYEE_TWO_KEY}:post:compensate`]);
    expect(await transfersOfKind(db, scene, "correction-replacement")).toEqual([`${PAYEE_TWO_KEY}:replace:${reviewId}`]);
    expect(await payeeTwo(db, scene)).toBe(20_500n);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("counts a replace's compensation once in compensations_total, not its repeat", async () => {
    const { scene, reviewId } = await givenHeld(db, "metric");
    const before = await compensationsCounted();
    await decide(db, scene, reviewId, "replace");
    await decide(db, scene, reviewId, "replace");
    expect(await compensationsCounted()).toBe(before + 1);
  });

  it("answers the corrected file uploaded again after a replace with duplicates only", async () => {
    const { scene, reviewId } = await givenHeld(db, "reupload");
    await decide(db, scene, reviewId, "replace");
    const again = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected-again.ach");
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    expect(await payeeTwo(db, scene)).toBe(20_500n);
  });

  it("posts a record applied as new under <natural key>:new:<review id> as a payment, keeping the original", async () => {
    const { scene, reviewId } = await givenHeld(db, "asnew");
    const decided = await decide(db, scene, reviewId, "apply_as_new");
    expect(decided).toMatchObject({ ok: true, value: { decided: { state: "applied_as_new", posting_key: `${PAYEE_TWO_KEY}:new:${reviewId}`, compensation_key: null } } });
    expect(await transfersOfKind(db, scene, "ach-credit")).toContain(`${PAYEE_TWO_KEY}:new:${reviewId}`);
    expect(await payeeTwo(db, scene)).toBe(40_500n);   // two payments, deliberately
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("answers the corrected file uploaded again after apply-as-new with duplicates, the applied record naming its payment", async () => {
    const { scene, reviewId } = await givenHeld(db, "asnew-again");
    await decide(db, scene, reviewId, "apply_as_new");
    const again = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected-again.ach");
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    const { rows } = await db.pool.query<{ original_ref: string }>(
      `SELECT original_ref FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         AND natural_key = $3`,
      [scene.tenantId, again.file_id, PAYEE_TWO_KEY]);
    expect(rows).toEqual([{ original_ref: `${PAYEE_TWO_KEY}:new:${reviewId}` }]);
    expect(await payeeTwo(db, scene)).toBe(40_500n);
  });

  it("posts nothing for a refused record and records who refused it and why", async () => {
    const { scene, reviewId } = await givenHeld(db, "refuse");
    const before = await balances(db.pool, scene.tenantId);
    expect(await decide(db, scene, reviewId, "refuse")).toMatchObject({ ok: true, value: { decided: { state: "refused", operator: "ops-1", reason: "partner confirmed 205.00", posting_key: null } } });
    expect(await balances(db.pool, scene.tenantId)).toEqual(before);
  });

  it("refuses a different second decision with REVIEW_DECIDED naming the first", async () => {
    const { scene, reviewId } = await givenHeld(db, "second");
    await decide(db, scene, reviewId, "replace", "ops-1");
    const second = await decide(db, scene, reviewId, "apply_as_new", "ops-2");
    const namingTheFirst = expect.stringMatching(/already decided: replace by ops-1/);
    const refused = { ok: false, error: { code: "REVIEW_DECIDED", message: namingTheFirst } };
    expect(second).toMatchObject(refused);
    expect(await payeeTwo(db, scene)).toBe(20_500n);
  });

  it("refuses a replace whose compensation the payee cannot cover, posting nothing and leaving the review open", async () => {
    // 205.00 applied and spent; the correction says 200.00: compensating 205.00 after crediting
    // 200.00 would take the payee to -5.00.
    const { scene, reviewId } = await givenHeld(db, "funds", "ach/original-amount-changed.ach", "ach/original.ach");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "grocer", kind: "customer", currency: "USD" });
    await post(db.pool, transferOf(scene.tenantId, "spent", "payee-two", "grocer", 20_500n));
    const refused = await decide(db, scene, reviewId, "replace");
    expect(refused).toMatchObject({ ok: false, error: { code: "REVIEW_INSUFFICIENT_FUNDS" } });
    expect(await transfersOfKind(db, scene, "correction-replacement")).toEqual([]);
    expect(await transfersOfKind(db, scene, "correction-compensation")).toEqual([]);
    expect((await listReviews(db.pool, { tenantId: scene.tenantId })).map((r) => r.state)).toEqual(["open"]);
    expect((await db.pool.query("SELECT 1 FROM review_decision WHERE tenant_id = $1", [scene.tenantId])).rowCount).toBe(0);
    expect(await payeeTwo(db, scene)).toBe(0n);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("replaces a suspect's matched record: the money stays, the payment moves to the new key", async () => {
    const scene = await givenScene(db.pool, "suspect");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/original-renumbered.ach"), "renumbered.ach");
    const [item] = await listReviews(db.pool, { tenantId: scene.tenantId });
    const before = await balances(db.pool, scene.tenantId);
    const decided = await decideReview(db.pool, { tenantId: scene.tenantId, reviewId: item?.review_id ?? "", decision: "replace", reason: "renumbered by the partner", operator: "ops-1" });
    expect(decided).toMatchObject({ ok: true, value: { decided: { state: "replaced", compensation_key: `${item?.matched_ref}:post:compensate` } } });
    expect(await balances(db.pool, scene.tenantId)).toEqual(before);
    const { rows } = await db.pool.query<{ natural_key: string; state: string }>(
      `SELECT natural_key, state FROM record_key WHERE tenant_id = $1
         AND natural_key = ANY($2::text[])
         ORDER BY natural_key`, [scene.tenantId, [item?.matched_ref, item?.natural_key]]);
    expect(rows.map((r) => r.state).sort()).toEqual(["applied", "replaced"]);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("shows the compensation and the corrected posting in the payee's statement as technical corrections", async () => {
    const { scene, reviewId } = await givenHeld(db, "statement");
    await decide(db, scene, reviewId, "replace");
    const statement = await accountStatement(db.pool, scene.tenantId, "payee-two", 100);
    expect(statement.lines.map((l) => [l.transferKey, l.kind, l.category, l.direction, l.amountMinor, l.sourceRef])).toEqual([
      [`${PAYEE_TWO_KEY}:post`, "ach-credit", "posting", "C", 20_000n, expect.stringMatching(/^ach:fil_/)],
      // one transaction: its entries in entry key order
      [`${PAYEE_TWO_KEY}:post:compensate`, "correction-compensation", "technical_correction", "D", 20_000n, `review:${reviewId}`],
      [`${PAYEE_TWO_KEY}:replace:${reviewId}`, "correction-replacement", "technical_correction", "C", 20_500n, `review:${reviewId}`],
    ]);
  });
});
