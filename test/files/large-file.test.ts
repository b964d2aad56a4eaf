import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { ingestArrival } from "../../src/files/pipeline.ts";
import { receiveFile, storedContent } from "../../src/files/receipt.ts";
import { generateAchChunks } from "../../src/protocols/ach/generator.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenScene, noOutcomes } from "./support.ts";

// A file of many chunks and many stored pieces, streamed from disk as the CLI streams it: what a
// big file must still get (its whole report, one outcome per record, its bytes kept exactly). How
// much memory that takes is measured by `npm run bench -- ingest`, not asserted here.
const entries = 50_000;

describe("a large file, streamed", () => {
  let db: TestDatabase;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), "clearline-large-file-"));
    file = path.join(dir, `payroll-${entries}.ach`);
    await pipeline(Readable.from(generateAchChunks({ entries, batches: 5, seed: 7 })), createWriteStream(file));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  it("ingests a 50,000-entry ACH file with its whole report and one outcome row per record", async () => {
    const scene = await givenScene(db.pool, "large");
    const report = await ingestArrival(db.pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli", name: "payroll.ach", content: createReadStream(file) });
    if (!report.ok) throw new Error(report.error.message);
    expect(report.value).toMatchObject({ status: "done", format: "ach", records: entries, outcomes: { ...noOutcomes, applied: entries }, errors: [] });
    const { rows } = await db.pool.query<{ n: bigint; first: number; last: number; transfers: bigint }>(
      `SELECT count(*) AS n, min(record_index) AS first, max(record_index) AS last, count(DISTINCT transfer_key) AS transfers
         FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
           AND outcome = 'applied'`, [scene.tenantId, report.value.file_id]);
    expect(rows[0]).toEqual({ n: BigInt(entries), first: 1, last: entries, transfers: BigInt(entries) });
  });

  it("keeps a file of several stored pieces byte for byte", async () => {
    const scene = await givenScene(db.pool, "pieces");
    const bytes = readFileSync(file);
    expect(bytes.byteLength).toBeGreaterThan(3 * limits.ingest.contentPieceBytes);
    const receipt = await receiveFile(db.pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli", name: "payroll.ach", content: createReadStream(file) });
    if (!receipt.ok) throw new Error(receipt.error.message);
    const readBack = createHash("sha256");
    for await (const slice of storedContent(db.pool, scene.tenantId, receipt.value.fileId)) readBack.update(slice);
    const original = createHash("sha256").update(bytes).digest("hex");
    expect({ stored: readBack.digest("hex"), receipt: receipt.value.bytesSha256, size: receipt.value.sizeBytes }).toEqual({ stored: original, receipt: original, size: bytes.byteLength });
  });
});
