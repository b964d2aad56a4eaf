import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRun } from "../../src/files/dry-run.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, type Scene } from "./support.ts";

// corrected.ach leaves out original.ach's entry 3 (line 5, 300.00 to payee three), changes entry 2
// and adds entry 6; its file id modifier differs (H -> I), so it is found as a correction by the
// keys it repeats (four of its five), not by its header.
const DROPPED = { position: "line 5", natural_key: "ach:23138010:231380100000003:1234567890:PPD:250305", kind: "credit", amount_minor: "30000", currency: "USD" };
const NOTE = "in the original, absent from the correction: not reversed automatically";

describe("records a correction leaves out: listed, never reversed", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  const dry = (scene: Scene, name: string) => dryRun(db.pool, scene.tenantId, async function* () { yield fixture(name); }, { name });

  it("names in the dry run the original's record the corrected file drops, with key and amount", async () => {
    const scene = await givenScene(db.pool, "dry");
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const report = await dry(scene, "ach/corrected.ach");
    expect(report).toMatchObject({ correction_of: original.file_id, dropped_records_not_checked: false,
      dropped_records: { note: NOTE, original_file_id: original.file_id, count: 1, records: [DROPPED] } });
  });

  it("names them in the ingest report of the correction, and posts nothing to reverse them", async () => {
    const scene = await givenScene(db.pool, "report");
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const corrected = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect(corrected).toMatchObject({ correction_of: original.file_id, dropped_records: { note: NOTE, original_file_id: original.file_id, count: 1, records: [DROPPED] } });
    const { rows } = await db.pool.query("SELECT 1 FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE $2", [scene.tenantId, `${DROPPED.natural_key}:%`]);
    expect(rows).toHaveLength(1);   // the original posting only
  });

  it("names nothing for a file with the same records under a new header, nor for identical bytes", async () => {
    const scene = await givenScene(db.pool, "same");
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const rebatched = await ingest(db.pool, scene, fixture("ach/original-rebatched.ach"), "rebatched.ach");
    expect(rebatched).toMatchObject({ correction_of: original.file_id, dropped_records: { count: 0, records: [] } });
    const identical = await ingest(db.pool, scene, fixture("ach/original.ach"), "copy.ach");
    expect(identical).toMatchObject({ correction_of: null, dropped_records: null });
    expect(await dry(scene, "ach/original.ach")).toMatchObject({ correction_of: null, dropped_records: null });
  });

  it("does not call a file a correction when it repeats fewer than half of its records from an earlier file", async () => {
    const scene = await givenScene(db.pool, "unrelated");
    // twins.ach holds two keys that original.ach repeats (as conflicts): 2 of original's 5.
    await ingest(db.pool, scene, fixture("ach/twins.ach"), "twins.ach");
    const other = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    expect(other.outcomes).toMatchObject({ applied: 3, conflict: 2 });
    expect(other).toMatchObject({ correction_of: null, dropped_records: null });
  });
});
