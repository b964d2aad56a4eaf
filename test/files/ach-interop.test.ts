import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectAch } from "../../src/normalize/inspect-ach.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, settlementOf, suspenseOf, transferCount } from "./support.ts";

describe("ACH files as real processors send them, through ingest", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function outcomeRows(tenantId: string, fileId: string) {
    const { rows } = await db.pool.query<{ outcome: string; code: string | null; detail: string | null; original_ref: string | null }>(
      `SELECT outcome, code, detail, original_ref FROM record_outcome WHERE tenant_id = $1
         AND file_id = $2 ORDER BY record_index`, [tenantId, fileId]);
    return rows;
  }

  it("holds both entries of a file that reused a trace across batches, with a file-level warning, and posts neither", async () => {
    const scene = await givenScene(db.pool, "reused");
    const report = await ingest(db.pool, scene, fixture("ach/trace-reused-across-batches.ach"), "reused.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, suspect: 2 });
    expect((await outcomeRows(scene.tenantId, report.file_id)).map((row) => [row.outcome, row.code])).toEqual([
      ["suspect", "RECORD_KEY_REUSED_IN_FILE"], ["suspect", "RECORD_KEY_REUSED_IN_FILE"],
    ]);
    const reused = report.warnings.filter((found) => found.code === "RECORD_KEY_REUSED_IN_FILE");
    expect(reused.map((found) => found.line)).toEqual([3, 6]);
    // Each outcome row, the dedup record of a file's record (decision 0053), names the other entry as its original.
    expect((await outcomeRows(scene.tenantId, report.file_id)).map((row) => row.original_ref)).toEqual([`${report.file_id}#2`, `${report.file_id}#1`]);
    const { rows: reviews } = await db.pool.query(
      `SELECT reason, record_index FROM record_review WHERE tenant_id = $1 ORDER BY record_index`,
      [scene.tenantId]);
    expect(reviews).toEqual([{ reason: "suspect", record_index: 1 }, { reason: "suspect", record_index: 2 }]);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(0);
  });

  it("names the posting of a reused trace's first entry, applied by an earlier chunk, as the later entry's original", async () => {
    const scene = await givenScene(db.pool, "reused-chunks");
    const report = await ingest(db.pool, scene, fixture("ach/trace-reused-across-batches.ach"), "reused.ach", { chunkRecordsMax: 1 });
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 1, suspect: 1 });
    const rows = await outcomeRows(scene.tenantId, report.file_id);
    const { rows: first } = await db.pool.query<{ transfer_key: string }>(
      `SELECT transfer_key FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         AND record_index = 1`, [scene.tenantId, report.file_id]);
    expect(rows.map((row) => row.outcome)).toEqual(["applied", "suspect"]);
    expect(rows[1]?.code).toBe("RECORD_KEY_REUSED_IN_FILE");
    expect(rows[1]?.original_ref).toBe(first[0]?.transfer_key);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
  });

  it("applies a zero file (no batches, blank File ID Modifier, bad Immediate Destination check digit) with its two named warnings", async () => {
    const scene = await givenScene(db.pool, "zero");
    const report = await ingest(db.pool, scene, fixture("ach/zero-file.ach"), "zero.ach");
    expect(report).toMatchObject({ status: "done", records: 0, outcomes: noOutcomes, errors: [] });
    expect(report.warnings.map((found) => found.code)).toEqual(["ACH_IMMEDIATE_DESTINATION_CHECK_DIGIT", "ACH_ZERO_FILE_ID_MODIFIER_BLANK"]);
  });

  it("reads records back to back with a single line break at the end", async () => {
    const scene = await givenScene(db.pool, "nobreaks");
    const report = await ingest(db.pool, scene, fixture("ach/no-line-breaks-trailing-newline.ach"), "blocks.ach");
    expect(report).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 1 } });
    expect(report.warnings.map((found) => found.code)).toContain("ACH_NO_LINE_BREAKS");
  });

  it("links a return that kept the forward's trace and transaction code and names another Original DFI, with a warning, never as a correction", async () => {
    const scene = await givenScene(db.pool, "lazyreturn");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const before = await balances(db.pool, scene.tenantId);
    const report = await ingest(db.pool, scene, fixture("ach/return-keeps-forward-trace-and-code.ach"), "return.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 1 });
    const [row] = await outcomeRows(scene.tenantId, report.file_id);
    expect(row).toMatchObject({ outcome: "applied", code: "RECORD_RETURN_LINK_WARNING" });
    expect(row?.detail).toContain("ach:23138010:231380100000001:1234567890:PPD:250305");
    expect(row?.detail).toMatch(/Original DFI 07100050 is not the forward's RDFI 09100001/);
    expect(row?.detail).toMatch(/transaction code 22 is not a return code/);
    const after = await balances(db.pool, scene.tenantId);
    expect(after[settlementOf(scene)]).toBe((before[settlementOf(scene)] ?? 0n) - 10_000n);
    expect(after[suspenseOf(scene)]).toBe((before[suspenseOf(scene)] ?? 0n) - 10_000n);
  });

  it("reports every warning inspect reports for the same file", async () => {
    const scene = await givenScene(db.pool, "warnings");
    const content = fixture("ach/return-keeps-forward-trace-and-code.ach");
    const inspected = inspectAch(content).findings.filter((found) => found.severity === "warning").map((found) => found.code);
    expect(inspected).toContain("ACH_ADDENDA_TRACE_MISMATCH");
    const report = await ingest(db.pool, scene, content, "return.ach");
    expect(report.warnings.map((found) => found.code)).toEqual(expect.arrayContaining(inspected));
  });
});
