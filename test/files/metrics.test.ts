import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshIngestGauges } from "../../src/files/pipeline.ts";
import { receiveFile } from "../../src/files/receipt.ts";
import { registry } from "../../src/observability/metrics.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest } from "./support.ts";

describe("ingest metrics", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("counts records by outcome and channel", async () => {
    const scene = await givenScene(db.pool, "metrics");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    const text = await registry.getSingleMetricAsString("clearline_ingest_records_total");
    expect(text).toMatch(/clearline_ingest_records_total\{channel="ach",outcome="applied"\} 6/);
    expect(text).toMatch(/clearline_ingest_records_total\{channel="ach",outcome="duplicate"\} 3/);
    expect(text).toMatch(/clearline_ingest_records_total\{channel="ach",outcome="conflict"\} 1/);
  });

  it("counts a file's repeats as dedup decisions by channel and reason, though they leave no dedup_event (decision 0053)", async () => {
    const scene = await givenScene(db.pool, "dedup-metric");
    const count = async (reason: string) => Number(new RegExp(`clearline_dedup_decisions_total\\{channel="ach",reason="${reason}"\\} (\\d+)`)
      .exec(await registry.getSingleMetricAsString("clearline_dedup_decisions_total"))?.[1] ?? 0);
    const before = { duplicate: await count("duplicate"), conflict: await count("conflict") };
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect({ duplicate: await count("duplicate") - before.duplicate, conflict: await count("conflict") - before.conflict }).toEqual({ duplicate: 3, conflict: 1 });
  });

  it("gauges files by status and the age of the oldest file not yet finished", async () => {
    const scene = await givenScene(db.pool, "gauges");
    const waiting = await receiveFile(db.pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli", name: "w.ach", content: fixture("ach/original.ach") });
    if (!waiting.ok) throw new Error(waiting.error.message);
    await db.pool.query(
      `UPDATE received_file SET received_at = now() - interval '90 seconds' WHERE file_id = $1`,
      [waiting.value.fileId]);
    await refreshIngestGauges(db.pool);
    expect(await registry.getSingleMetricAsString("clearline_ingest_files")).toMatch(/clearline_ingest_files\{status="received"\} 1/);
    const age = /clearline_ingest_oldest_processing_age_seconds (\d+(\.\d+)?)/.exec(await registry.getSingleMetricAsString("clearline_ingest_oldest_processing_age_seconds"));
    expect(Number(age?.[1])).toBeGreaterThanOrEqual(90);
  });
});
