import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRun } from "../../src/files/dry-run.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, transferCount } from "./support.ts";

const contentOf = (relative: string) => async function* () { yield fixture(relative); };

// The dry run asks the record core's own stages (previewRecords) and rolls them back, so it says
// what ingesting would say: here, the suspects a file with renumbered traces would be held as.
describe("the dry run decides with the record core's stages", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("previews a record held because another record of the file has its key as suspect, as ingesting then holds it", async () => {
    const scene = await givenScene(db.pool, "preview-reuse");
    const preview = await dryRun(db.pool, scene.tenantId, contentOf("ach/trace-reused-across-batches.ach"), { name: "reused.ach" });
    const report = await ingest(db.pool, scene, fixture("ach/trace-reused-across-batches.ach"), "reused.ach");
    expect(preview.verdicts.suspect).toBe(report.outcomes.suspect);
    expect(preview.verdicts.suspect).toBe(2);
  });

  it("leaves nothing behind: no key, no transfer, no outcome or dedup record", async () => {
    const scene = await givenScene(db.pool, "preview-clean");
    await dryRun(db.pool, scene.tenantId, contentOf("ach/original.ach"), { name: "original.ach" });
    const { rows } = await db.pool.query<{ keys: number; events: number }>(
      `SELECT (SELECT count(*) FROM record_key WHERE tenant_id = $1)::int AS keys, (SELECT count(*)
         FROM record_outcome WHERE tenant_id = $1)::int + (SELECT count(*) FROM dedup_event
         WHERE tenant_id = $1)::int AS events`, [scene.tenantId]);
    expect(rows[0]).toEqual({ keys: 0, events: 0 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(0);
    const again = await dryRun(db.pool, scene.tenantId, contentOf("ach/original.ach"), { name: "original.ach" });
    expect(again.verdicts).toEqual({ new: 5, already_applied: 0, changed: 0, suspect: 0, rejected: 0 });
  });
});
