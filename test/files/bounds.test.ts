import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { processFile, unfinishedFiles } from "../../src/files/pipeline.ts";
import { receiveFile, sanitizeFileName, storedContent } from "../../src/files/receipt.ts";
import { SftpPoller } from "../../src/sources/sftp.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { routingCheckDigit } from "../../src/protocols/ach/routing.ts";
import { writeAchFile } from "../../src/protocols/ach/writer.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, noOutcomes, writeGeneratedAch, type Scene } from "./support.ts";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

async function collect(source: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const piece of source) out.push(piece);
  return out;
}

/** An ACH file of `entries` credits whose check digits are all wrong: each entry is rejected on its own. */
function badCheckDigits(entries: number): Buffer {
  const file = writeAchFile({
    fileHeader: { priorityCode: "01", immediateDestination: " 091000019", immediateOrigin: " 231380104", fileCreationDate: "250304", fileCreationTime: "1015", fileIdModifier: "Z", immediateDestinationName: "BANK", immediateOriginName: "CLEARLINE" },
    batches: [{
      header: { serviceClassCode: "220", companyName: "ACME", companyIdentification: "1234567890", standardEntryClassCode: "PPD", companyEntryDescription: "PAYROLL", effectiveEntryDate: "250305", originatorStatusCode: "1", originatingDfiIdentification: "23138010", batchNumber: "1" },
      entries: Array.from({ length: entries }, (_, i) => ({ fields: {
        transactionCode: "22", receivingDfiIdentification: "09100001", checkDigit: String((Number(routingCheckDigit("09100001")) + 1) % 10),
        dfiAccountNumber: String(i), amount: "100", individualName: "PAYEE", traceNumber: `23138010${String(i + 1).padStart(7, "0")}`,
      } })),
    }],
  });
  if (!file.ok) throw new Error(file.error.message);
  return file.value;
}

describe("ingest bounds, each fed one past its limit", () => {
  let db: TestDatabase;
  let scene: Scene;
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "bounds");
  });
  afterAll(async () => { await db.drop(); });
  const arrival = (content: Uint8Array, name = "f.ach") => ({ tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli" as const, name, content });

  it("fileBytesMax: refuses a file one byte past the bound and stores nothing of it", async () => {
    const bound = { fileBytesMax: 100 };
    const refused = await receiveFile(db.pool, arrival(Buffer.alloc(101, 0x31)), bound);
    expect(refused).toMatchObject({ ok: false, error: { code: "FILE_TOO_LARGE" } });
    expect(await receiveFile(db.pool, arrival(Buffer.alloc(100, 0x31)), { fileBytesMax: 100 })).toMatchObject({ ok: true });
    const { rows } = await db.pool.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM received_file WHERE tenant_id = $1`, [scene.tenantId]);
    expect(rows[0]?.n).toBe(1n);
  });

  it("contentPieceBytes and readSliceBytes: a file one byte past a piece is stored in two pieces and read back in bounded slices, byte for byte", async () => {
    const content = Buffer.alloc(limits.ingest.contentPieceBytes + 1);
    for (let i = 0; i < content.length; i++) content[i] = i % 251;
    const receipt = await receiveFile(db.pool, arrival(content));
    if (!receipt.ok) throw new Error(receipt.error.message);
    const pieces = await db.pool.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM received_file_content WHERE tenant_id = $1 AND file_id = $2`,
      [scene.tenantId, receipt.value.fileId]);
    expect(pieces.rows[0]?.n).toBe(2n);
    const slices = await collect(storedContent(db.pool, scene.tenantId, receipt.value.fileId));
    expect(Math.max(...slices.map((s) => s.byteLength))).toBe(limits.ingest.readSliceBytes);
    expect(Buffer.concat(slices).equals(content)).toBe(true);
  });

  it("chunkRecordsMax: a file of one record past a chunk commits in two chunks", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "clearline-bounds-")), "chunks.ach");
    await writeGeneratedAch(file, limits.ingest.chunkRecordsMax + 1, 3);
    const progress: number[] = [];
    const report = await ingest(db.pool, scene, readFileSync(file), "chunks.ach", { onProgress: (done) => progress.push(done) });
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: limits.ingest.chunkRecordsMax + 1 });
    expect(progress).toEqual([limits.ingest.chunkRecordsMax, limits.ingest.chunkRecordsMax + 1]);
  });

  it("findingsMax: a report lists at most findingsMax errors, while every rejected record is counted", async () => {
    const other = await givenScene(db.pool, "bounds-findings");
    const report = await ingest(db.pool, other, badCheckDigits(limits.ingest.findingsMax + 1), "bad.ach");
    expect(report.outcomes.rejected).toBe(limits.ingest.findingsMax + 1);
    expect(report.errors).toHaveLength(limits.ingest.findingsMax);
  });

  it("fileNameCharsMax: a name one character past the bound is cut to the bound", () => {
    const long = "a".repeat(limits.ingest.fileNameCharsMax + 1);
    expect(sanitizeFileName(long)).toEqual({ ok: true, value: "a".repeat(limits.ingest.fileNameCharsMax) });
  });

  it("staleProcessingMs: a processing file is resumed by the periodic job only once its heartbeat is older than the bound", async () => {
    const receipt = await receiveFile(db.pool, arrival(fixture("ach/original.ach"), "stale.ach"));
    if (!receipt.ok) throw new Error(receipt.error.message);
    await db.pool.query(
      `UPDATE received_file SET status = 'processing',
         updated_at = now() - make_interval(secs => $3::double precision / 1000)
         WHERE tenant_id = $1 AND file_id = $2`,
      [scene.tenantId, receipt.value.fileId, limits.ingest.staleProcessingMs - 5_000]);
    const fresh = await unfinishedFiles(db.pool, { staleAfterMs: limits.ingest.staleProcessingMs });
    expect(fresh.map((f) => f.fileId)).not.toContain(receipt.value.fileId);
    await db.pool.query(
      `UPDATE received_file
         SET updated_at = now() - make_interval(secs => $3::double precision / 1000)
         WHERE tenant_id = $1 AND file_id = $2`,
      [scene.tenantId, receipt.value.fileId, limits.ingest.staleProcessingMs + 1_000]);
    const stale = await unfinishedFiles(db.pool, { staleAfterMs: limits.ingest.staleProcessingMs });
    expect(stale.map((f) => f.fileId)).toContain(receipt.value.fileId);
    expect((await processFile(db.pool, scene.tenantId, receipt.value.fileId)).status).toBe("done");
  });

  it("suspectWindowHours: equal content applied one hour past the window is no longer suspect", async () => {
    const other = await givenScene(db.pool, "bounds-window");
    await ingest(db.pool, other, fixture("ach/original.ach"), "original.ach");
    await db.pool.query(
      `UPDATE record_key SET created_at = now() - make_interval(hours => $2) WHERE tenant_id = $1`,
      [other.tenantId, limits.ingest.suspectWindowHours + 1]);
    const renumbered = await ingest(db.pool, other, fixture("ach/original-renumbered.ach"), "renumbered.ach");
    expect(renumbered.outcomes).toEqual({ ...noOutcomes, applied: 5 });
  });

  it("sftpBackoffMaxMs: the wait after failures doubles but never passes the bound", () => {
    const poller = new SftpPoller({
      pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, spoolFolder: tmpdir(), logger: createLogger({ level: "silent" }),
      source: { tenant: "t", partner: "p", host: "127.0.0.1", port: 22, username: "u", privateKeyPath: "/dev/null", hostKeySha256: `SHA256:${"A".repeat(43)}`, inbox: "/", namePattern: ".", deleteAfter: true, pollIntervalMs: limits.ingest.sftpBackoffMaxMs / 2 + 1 },
    });
    (poller as unknown as { failures: number }).failures = 1;
    expect(poller.backoffMs()).toBe(limits.ingest.sftpBackoffMaxMs);
  });
});
