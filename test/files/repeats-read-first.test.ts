import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, transferCount, type Scene } from "./support.ts";

// A chunk that follows a chunk of repeats reads its keys before claiming (docs/decisions/0046).
// With one record per chunk, every chunk after a duplicate takes that path: whatever it meets
// (a duplicate, a changed record, a new one), the file is decided as a file read in one chunk.

/** A file's outcome rows, with the file ids in their details made neutral (each scene has its own). */
async function outcomeRows(pool: Pool, scene: Scene, fileId: string): Promise<unknown[]> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT record_index, position, natural_key, outcome, code, detail, original_ref, transfer_key
       FROM record_outcome
      WHERE tenant_id = $1 AND file_id = $2 ORDER BY record_index`, [scene.tenantId, fileId]);
  return rows.map((row) => ({ ...row, detail: typeof row.detail === "string" ? row.detail.replace(/fil_[0-9a-f]+/g, "FILE") : row.detail }));
}

describe("a re-upload read key-first decides every record as the claim would", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("applies the new entry, holds the changed one and counts the rest duplicate, one record per chunk, as in one chunk", async () => {
    const whole = await givenScene(db.pool, "whole");
    const split = await givenScene(db.pool, "split");
    for (const scene of [whole, split]) await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const inOne = await ingest(db.pool, whole, fixture("ach/corrected.ach"), "corrected.ach");
    const perRecord = await ingest(db.pool, split, fixture("ach/corrected.ach"), "corrected.ach", { chunkRecordsMax: 1 });
    expect(perRecord.outcomes).toEqual({ ...noOutcomes, applied: 1, duplicate: 3, conflict: 1 });
    expect(perRecord.outcomes).toEqual(inOne.outcomes);
    expect(await outcomeRows(db.pool, split, perRecord.file_id)).toEqual(await outcomeRows(db.pool, whole, inOne.file_id));
    expect(await transferCount(db.pool, split.tenantId)).toBe(6);
    expect(Object.values(await balances(db.pool, split.tenantId))).toEqual(Object.values(await balances(db.pool, whole.tenantId)));
  });

  it("answers identical bytes in chunks of two with every record duplicate, each with its outcome row naming the original, and posts nothing", async () => {
    const scene = await givenScene(db.pool, "again");
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const before = await balances(db.pool, scene.tenantId);
    const again = await ingest(db.pool, scene, fixture("ach/original.ach"), "copy.ach", { chunkRecordsMax: 2 });
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    const rows = await outcomeRows(db.pool, scene, again.file_id);
    const codes = rows.map((o) => (o as { code: string }).code);
    expect(codes).toEqual(Array(5).fill("RECORD_DUPLICATE"));
    expect((await outcomeRows(db.pool, scene, again.file_id)).map((o) => (o as { original_ref: string }).original_ref))
      .toEqual((await outcomeRows(db.pool, scene, first.file_id)).map((o) => (o as { transfer_key: string }).transfer_key));
    expect(await transferCount(db.pool, scene.tenantId)).toBe(5);
    expect(await balances(db.pool, scene.tenantId)).toEqual(before);
  });

  it("holds a changed record met in a chunk read key-first for review, as in one chunk, and posts nothing for it", async () => {
    const whole = await givenScene(db.pool, "changed-whole");
    const split = await givenScene(db.pool, "changed-split");
    for (const scene of [whole, split]) await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const inOne = await ingest(db.pool, whole, fixture("ach/original-amount-changed.ach"), "changed.ach");
    const perRecord = await ingest(db.pool, split, fixture("ach/original-amount-changed.ach"), "changed.ach", { chunkRecordsMax: 1 });
    expect(perRecord.outcomes).toEqual({ ...noOutcomes, duplicate: 4, conflict: 1 });
    expect(await outcomeRows(db.pool, split, perRecord.file_id)).toEqual(await outcomeRows(db.pool, whole, inOne.file_id));
    const { rows } = await db.pool.query(
      `SELECT reason, state, natural_key FROM record_review WHERE tenant_id = $1`,
      [split.tenantId]);
    expect(rows).toEqual([{ reason: "conflict", state: "open", natural_key: "ach:23138010:231380100000002:1234567890:PPD:250305" }]);
    expect(await transferCount(db.pool, split.tenantId)).toBe(5);
  });
});
