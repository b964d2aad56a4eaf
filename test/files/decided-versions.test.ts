import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { decideReview, type ReviewDecisionKind } from "../../src/records/review-decision.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import {
  fixture, givenScene, ingest, ledgerLines, noOutcomes, PAYEE_TWO_KEY, type Scene,
} from "./support.ts";

// A version of a natural key that a person already decided on, arriving again, is a repeat of
// that decision (docs/decisions/0099): a duplicate naming the decision, nothing posted, no new
// review item. Payee two of original.ach is paid 200.00; corrected.ach says 205.00.

/** original-amount-changed.ach with payee two at 210.00: a third version, never decided. */
function thirdVersion(): Buffer {
  return Buffer.from(fixture("ach/original-amount-changed.ach").toString("latin1")
    .replace("0000020500ID2", "0000021000ID2")
    .replace("000000060500", "000000061000")
    .replace("000000150500", "000000151000"), "latin1");
}

async function givenDecided(
  db: TestDatabase, name: string, decision: ReviewDecisionKind,
): Promise<{ scene: Scene; reviewId: string; originalFileId: string }> {
  const scene = await givenScene(db.pool, name);
  await openAccount(db.pool, {
    tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD",
  });
  await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:1000002", "payee-two");
  const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
  await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
  const [held] = await listReviews(db.pool, { tenantId: scene.tenantId });
  if (!held) throw new Error("the corrected record was not held");
  const decided = await decideReview(db.pool, {
    tenantId: scene.tenantId, reviewId: held.review_id, decision,
    reason: "partner confirmed 205.00", operator: "alice",
  });
  expect(decided.ok).toBe(true);
  return { scene, reviewId: held.review_id, originalFileId: original.file_id };
}

async function payeeTwoRow(db: TestDatabase, scene: Scene, fileId: string): Promise<unknown> {
  const { rows } = await db.pool.query(
    `SELECT outcome, code, original_ref, detail FROM record_outcome
      WHERE tenant_id = $1 AND file_id = $2 AND natural_key = $3`,
    [scene.tenantId, fileId, PAYEE_TWO_KEY]);
  return rows[0];
}

async function reviewCount(db: TestDatabase, scene: Scene): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM record_review WHERE tenant_id = $1", [scene.tenantId]);
  return Number(rows[0]?.n);
}

describe("a version already decided on, arriving again, repeats the decision", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("answers the original re-delivered byte for byte after a replace as a repeat of the "
    + "superseded version: no new review item, the decision named, nothing posted "
    + "(regression: it was a new conflict)", async () => {
    const { scene, reviewId } = await givenDecided(db, "resent-original", "replace");
    const ledger = await ledgerLines(db.pool, scene.tenantId);
    const reviews = await reviewCount(db, scene);

    const again = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");

    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    expect(again.repeats_decided).toBe(1);
    expect(await payeeTwoRow(db, scene, again.file_id)).toEqual({
      outcome: "duplicate", code: "RECORD_VERSION_DECIDED",
      original_ref: `${PAYEE_TWO_KEY}:post`,
      detail: `a version already decided: replaced by review ${reviewId} `
        + "(replace by alice: partner confirmed 205.00)",
    });
    expect(await reviewCount(db, scene)).toBe(reviews);
    expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(ledger);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("answers the refused version sent again as a repeat of the refused arrival, "
    + "posting nothing", async () => {
    const { scene, reviewId } = await givenDecided(db, "resent-refused", "refuse");
    const ledger = await ledgerLines(db.pool, scene.tenantId);
    const corrected = await db.pool.query<{ file_id: string; record_index: number }>(
      "SELECT file_id, record_index FROM record_review WHERE tenant_id = $1 AND review_id = $2",
      [scene.tenantId, reviewId]);
    const held = corrected.rows[0];

    const again = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");

    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    expect(again.repeats_decided).toBe(1);
    expect(await payeeTwoRow(db, scene, again.file_id)).toEqual({
      outcome: "duplicate", code: "RECORD_VERSION_DECIDED",
      original_ref: `${held?.file_id}#${held?.record_index}`,
      detail: `a version already decided: refused by review ${reviewId} `
        + "(refuse by alice: partner confirmed 205.00)",
    });
    expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(ledger);
  });

  it("names the separate payment when a version applied as new arrives again", async () => {
    const { scene, reviewId } = await givenDecided(db, "resent-as-new", "apply_as_new");
    const again = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect(again.repeats_decided).toBe(1);
    expect(await payeeTwoRow(db, scene, again.file_id)).toMatchObject({
      outcome: "duplicate", code: "RECORD_VERSION_DECIDED",
      original_ref: `${PAYEE_TWO_KEY}:new:${reviewId}`,
    });
  });

  it("holds a version never decided for a person, as any changed record", async () => {
    const { scene } = await givenDecided(db, "third-version", "replace");
    const reviews = await reviewCount(db, scene);
    const third = await ingest(db.pool, scene, thirdVersion(), "third.ach");
    expect(third.outcomes).toMatchObject({ conflict: 1 });
    expect(third.repeats_decided).toBe(0);
    expect(await reviewCount(db, scene)).toBe(reviews + 1);
  });

  it("recognises each earlier version once a replacement is itself replaced "
    + "(200.00 and 205.00 after 210.00)", async () => {
    const { scene } = await givenDecided(db, "chain", "replace");
    await ingest(db.pool, scene, thirdVersion(), "third.ach");
    const open = (await listReviews(db.pool, { tenantId: scene.tenantId }))
      .find((r) => r.state === "open");
    if (!open) throw new Error("the third version was not held");
    const decided = await decideReview(db.pool, {
      tenantId: scene.tenantId, reviewId: open.review_id, decision: "replace",
      reason: "partner confirmed 210.00", operator: "bob",
    });
    expect(decided.ok).toBe(true);
    const ledger = await ledgerLines(db.pool, scene.tenantId);
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const second = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect([first.repeats_decided, second.repeats_decided]).toEqual([1, 1]);
    expect([first.outcomes.conflict, second.outcomes.conflict]).toEqual([0, 0]);
    expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(ledger);
  });

  it("names the decision when a suspect's matched record, replaced, or the refused suspect, "
    + "arrives again", async () => {
    for (const decision of ["replace", "refuse"] as const) {
      const scene = await givenScene(db.pool, `suspect-${decision}`);
      await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
      await ingest(db.pool, scene, fixture("ach/original-renumbered.ach"), "renumbered.ach");
      const [held] = await listReviews(db.pool, { tenantId: scene.tenantId });
      if (!held) throw new Error("the renumbered record was not held");
      const decided = await decideReview(db.pool, {
        tenantId: scene.tenantId, reviewId: held.review_id, decision,
        reason: "renumbered by the partner", operator: "alice",
      });
      expect(decided.ok).toBe(true);
      const ledger = await ledgerLines(db.pool, scene.tenantId);
      const resent = decision === "replace" ? "ach/original.ach" : "ach/original-renumbered.ach";
      const again = await ingest(db.pool, scene, fixture(resent), "again.ach");
      expect(again.outcomes.conflict + again.outcomes.suspect).toBe(0);
      expect(again.repeats_decided).toBe(1);
      const { rows } = await db.pool.query<{ detail: string }>(
        `SELECT detail FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
            AND code = 'RECORD_VERSION_DECIDED'`, [scene.tenantId, again.file_id]);
      const verb = decision === "replace" ? "replaced" : "refused";
      expect(rows.map((r) => r.detail)).toEqual([
        `a version already decided: ${verb} by review ${held.review_id} `
          + `(${decision} by alice: renumbered by the partner)`,
      ]);
      expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(ledger);
    }
  });
});
