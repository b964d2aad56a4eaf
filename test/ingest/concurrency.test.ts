import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFile } from "../../src/ingest/pipeline.ts";
import { receiveFile } from "../../src/ingest/receipt.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, noOutcomes, transferCount, writeGeneratedAch } from "./support.ts";

// Two workers at once (an SFTP poll and an ops upload of the same file, or two processes resuming
// one file): every record is applied once.
describe("concurrency: overlapping ingestions apply each record once", () => {
  let db: TestDatabase;
  let big: Buffer;
  const entries = 4_000;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 12 });
    const file = path.join(mkdtempSync(path.join(tmpdir(), "clearline-concurrency-")), "payroll.ach");
    await writeGeneratedAch(file, entries, 5);
    big = readFileSync(file);
  });
  afterAll(async () => { await db.drop(); });

  it("applies a file received twice at the same moment once: applied and duplicate add up to one file's records", async () => {
    const scene = await givenScene(db.pool, "same");
    const [a, b] = await Promise.all([ingest(db.pool, scene, big, "sftp-copy.ach", { source: "sftp" }), ingest(db.pool, scene, big, "ops-copy.ach", { source: "http" })]);
    expect(a.outcomes.applied + b.outcomes.applied).toBe(entries);
    expect(a.outcomes.duplicate + b.outcomes.duplicate).toBe(entries);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(entries);
  });

  it("applies the union of an original and its correction ingested at the same moment", async () => {
    const scene = await givenScene(db.pool, "overlap");
    const [original, corrected] = await Promise.all([ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach"), ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach")]);
    const sum = (k: keyof typeof noOutcomes) => original.outcomes[k] + corrected.outcomes[k];
    // Five originals and one new entry applied; the three shared entries duplicate; entry 2 is one
    // applied version and one conflict, whichever file won the race.
    expect({ applied: sum("applied"), duplicate: sum("duplicate"), conflict: sum("conflict") }).toEqual({ applied: 6, duplicate: 3, conflict: 1 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(6);
  });

  it("lets only one of two workers resuming the same file apply each chunk", async () => {
    const scene = await givenScene(db.pool, "resume");
    const receipt = await receiveFile(db.pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli", name: "payroll.ach", content: big });
    if (!receipt.ok) throw new Error(receipt.error.message);
    await Promise.all([processFile(db.pool, scene.tenantId, receipt.value.fileId), processFile(db.pool, scene.tenantId, receipt.value.fileId)]);
    const finished = await processFile(db.pool, scene.tenantId, receipt.value.fileId);
    expect(finished).toMatchObject({ status: "done", records: entries, outcomes: { ...noOutcomes, applied: entries } });
    const { rows } = await db.pool.query<{ n: bigint }>("SELECT count(*) AS n FROM ingest_outcome WHERE tenant_id = $1", [scene.tenantId]);
    expect(rows[0]?.n).toBe(BigInt(entries));
    expect(await transferCount(db.pool, scene.tenantId)).toBe(entries);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });
});
