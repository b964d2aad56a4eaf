import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, settlementOf, suspenseOf, transferCount } from "./support.ts";

// The re-upload cases of issue 6, each with exact counts and ledger totals. original.ach is a
// payroll of five credits (100.00, 200.00, 300.00, 400.00, 500.00: 1,500.00 in all); no alias is
// known, so every counterparty leg goes to the partner's suspense account.
describe("re-uploads: every record applied exactly once, whatever file it comes back in", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("applies a payroll file once: five transfers, settlement debited 1,500.00, suspense credited 1,500.00", async () => {
    const scene = await givenScene(db.pool, "first");
    const report = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    expect(report).toMatchObject({ status: "done", format: "ach", records: 5, outcomes: { ...noOutcomes, applied: 5 }, errors: [] });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(5);
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 150_000n });
  });

  it("answers identical bytes under a new name with all five records duplicate and nothing posted", async () => {
    const scene = await givenScene(db.pool, "identical");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const again = await ingest(db.pool, scene, fixture("ach/original.ach"), "payroll-copy.ach");
    expect(again).toMatchObject({ status: "done", name: "payroll-copy.ach", records: 5, outcomes: { ...noOutcomes, duplicate: 5 } });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(5);
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 150_000n });
  });

  it("answers the same entries re-batched and reordered under a new header with all five duplicate", async () => {
    const scene = await givenScene(db.pool, "rebatched");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const again = await ingest(db.pool, scene, fixture("ach/original-rebatched.ach"), "rebatched.ach");
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(5);
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 150_000n });
  });

  it("applies only the new entry of a corrected file (one dropped, one added, one changed): 1 applied, 3 duplicate, 1 conflict", async () => {
    const scene = await givenScene(db.pool, "corrected");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const corrected = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect(corrected.outcomes).toEqual({ ...noOutcomes, applied: 1, duplicate: 3, conflict: 1 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(6);
    // 1,500.00 + the new 600.00; the changed amount (200.00 -> 205.00) is not applied.
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 210_000n, [suspenseOf(scene)]: 210_000n });
  });

  it("quarantines one amount changed under the same key as a conflict listed for review, and records the file as a correction", async () => {
    const scene = await givenScene(db.pool, "changed");
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const changed = await ingest(db.pool, scene, fixture("ach/original-amount-changed.ach"), "original-fixed.ach");
    expect(changed.outcomes).toEqual({ ...noOutcomes, duplicate: 4, conflict: 1 });
    expect(changed.correction_of).toBe(original.file_id);
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 150_000n });
    const { rows } = await db.pool.query<{ reason: string; state: string; natural_key: string }>(
      `SELECT reason, state, natural_key FROM record_review
         WHERE tenant_id = $1`, [scene.tenantId]);
    expect(rows).toEqual([{ reason: "conflict", state: "open", natural_key: "ach:23138010:231380100000002:1234567890:PPD:250305" }]);
  });

  it("applies nothing of a structurally broken file and everything of its fixed version", async () => {
    const scene = await givenScene(db.pool, "broken");
    const broken = await ingest(db.pool, scene, fixture("ach/malformed-batch-debit-total.ach"), "payroll.ach");
    expect(broken).toMatchObject({ status: "rejected", outcomes: noOutcomes, errors: [{ code: "ACH_BATCH_TOTAL_DEBIT_MISMATCH", line: 6 }] });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(0);
    const fixed = await ingest(db.pool, scene, fixture("ach/base-valid.ach"), "payroll.ach");
    expect(fixed).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 3 } });
    // Credits 1,250.00 + 45.00 in, a debit of 980.50 out.
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 31_450n, [suspenseOf(scene)]: 31_450n });
  });

  it("applies returns once, however often they are re-sent", async () => {
    const scene = await givenScene(db.pool, "returns");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const returns = await ingest(db.pool, scene, fixture("ach/payroll-returns.ach"), "returns.ach");
    expect(returns.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    const resent = await ingest(db.pool, scene, fixture("ach/payroll-returns-resent.ach"), "returns-again.ach");
    expect(resent.outcomes).toEqual({ ...noOutcomes, duplicate: 2 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(7);
    // 1,500.00 less the returned 100.00 and 300.00.
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 110_000n, [suspenseOf(scene)]: 110_000n });
  });

  it("records a return before its original as an orphan and matches it when the original arrives", async () => {
    const scene = await givenScene(db.pool, "orphans");
    const returns = await ingest(db.pool, scene, fixture("ach/payroll-returns.ach"), "returns.ach");
    expect(returns.outcomes).toEqual({ ...noOutcomes, orphan: 2 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(0);
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    expect(original.outcomes).toEqual({ ...noOutcomes, applied: 5 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(7);
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 110_000n, [suspenseOf(scene)]: 110_000n });
    const resent = await ingest(db.pool, scene, fixture("ach/payroll-returns-resent.ach"), "returns-again.ach");
    expect(resent.outcomes).toEqual({ ...noOutcomes, duplicate: 2 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(7);
  });

  it("applies both of two entries identical in everything but their trace numbers", async () => {
    const scene = await givenScene(db.pool, "twins");
    const report = await ingest(db.pool, scene, fixture("ach/twins.ach"), "twins.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    expect(await balances(db.pool, scene.tenantId)).toEqual({ [settlementOf(scene)]: 250_000n, [suspenseOf(scene)]: 250_000n });
  });

  it("holds as suspect every entry of a file that renumbered the traces of records applied from another file", async () => {
    const scene = await givenScene(db.pool, "renumbered");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const renumbered = await ingest(db.pool, scene, fixture("ach/original-renumbered.ach"), "renumbered.ach");
    expect(renumbered.outcomes).toEqual({ ...noOutcomes, suspect: 5 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(5);
  });
});
