import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.ts";
import { DropFolder } from "../../src/sources/drop-folder.ts";
import { sanitizeFileName } from "../../src/files/receipt.ts";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { registerFileRoutes } from "../../src/api/routes/files.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { fixture, givenScene, noOutcomes, type Scene } from "../files/support.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createPartner } from "../../src/partners/partners.ts";

const quiet = createLogger({ level: "silent" });

/** Polls until the effect shows (a file moved, a report written); the test's timeout is the last guard. */
async function until<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("file names", () => {
  it("keeps the last path component only and replaces unsafe characters", () => {
    expect(sanitizeFileName("../../etc/passwd")).toEqual({ ok: true, value: "passwd" });
    expect(sanitizeFileName("C:\\drop\\pay roll;1.ach")).toEqual({ ok: true, value: "pay_roll_1.ach" });
    const refused = { ok: false, error: { code: "FILE_NAME_INVALID" } };
    expect(sanitizeFileName("..")).toMatchObject(refused);
  });
});

describe("the drop folder", () => {
  let db: TestDatabase;
  let scene: Scene;
  let folder: string;
  let drop: DropFolder;
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "drop");
    folder = mkdtempSync(path.join(tmpdir(), "clearline-drop-"));
    drop = new DropFolder({ pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, folder, logger: quiet, stableMs: 100, rescanIntervalMs: 200 });
    await drop.start();
  });
  afterAll(async () => {
    await drop.stop();
    await db.drop();
  });

  it("ingests a file copied in under a temp name and renamed, then moves it to processed/ with its report", async () => {
    writeFileSync(path.join(folder, "payroll.ach.part"), fixture("ach/original.ach"));
    // A file written after the temp one is taken (rejected: it touches no ledger), so the folder
    // has been scanned since the temp name appeared: an event to wait for, not a pause.
    writeFileSync(path.join(folder, "after-the-part.ach"), fixture("ach/malformed-block-count.ach"));
    await until(() => (existsSync(path.join(folder, "rejected", "after-the-part.ach.report.json")) ? true : undefined));
    expect(readdirSync(path.join(folder, "processed"))).toEqual([]);   // the temp name is never taken
    renameSync(path.join(folder, "payroll.ach.part"), path.join(folder, "payroll.ach"));
    // The report is written first, then the file moved beside it (src/ingest/drop-folder.ts): wait for both.
    const report = await until(() => (existsSync(path.join(folder, "processed", "payroll.ach.report.json")) && existsSync(path.join(folder, "processed", "payroll.ach"))
      ? JSON.parse(readFileSync(path.join(folder, "processed", "payroll.ach.report.json"), "utf8")) as { outcomes: unknown; status: string; source: string } : undefined));
    expect(report).toMatchObject({ status: "done", source: "drop_folder", outcomes: { ...noOutcomes, applied: 5 } });
    expect(existsSync(path.join(folder, "processed", "payroll.ach"))).toBe(true);
    expect(existsSync(path.join(folder, "payroll.ach"))).toBe(false);
  });

  it("moves a structurally broken file to rejected/ with the finding in its report", async () => {
    writeFileSync(path.join(folder, "broken.ach"), fixture("ach/malformed-file-entry-hash.ach"));
    const report = await until(() => (existsSync(path.join(folder, "rejected", "broken.ach.report.json"))
      ? JSON.parse(readFileSync(path.join(folder, "rejected", "broken.ach.report.json"), "utf8")) as { status: string; errors: Array<{ code: string }> } : undefined));
    expect(report).toMatchObject({ status: "rejected", errors: [{ code: "ACH_FILE_ENTRY_HASH_MISMATCH" }] });
  });

  it("answers the same file dropped again under the same name with duplicates, kept beside the first", async () => {
    writeFileSync(path.join(folder, "payroll.ach"), fixture("ach/original.ach"));
    const name = await until(() => readdirSync(path.join(folder, "processed")).find((n) => n.endsWith("-payroll.ach.report.json")));
    const report = JSON.parse(readFileSync(path.join(folder, "processed", name), "utf8")) as { outcomes: unknown };
    expect(report.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
  });
});

describe("files over HTTP", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  const api = { baseUrl: "" };
  let apiKey: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    const tenant = await createTenant(db.pool, "uploads");
    if (!tenant.ok) throw new Error(tenant.error.message);
    apiKey = tenant.value.apiKey;
    await createPartner(db.pool, tenant.value.tenantId, "fed");
    app = buildHttpServer({ pool: db.pool, logger: quiet, extraRoutes: [(server) => registerFileRoutes(server, { pool: db.pool })] });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api.baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  const upload = (name: string, body: Buffer, key: string) => fetch(`${api.baseUrl}/v1/files?name=${encodeURIComponent(name)}`, {
    method: "POST", headers: { authorization: `Bearer ${apiKey}`, "idempotency-key": key, "content-type": "application/octet-stream" }, body,
  });

  it("receives an upload and returns the file report; a repeat of the key returns the same file", async () => {
    const first = await upload("payroll.ach", fixture("ach/original.ach"), "upload-1");
    expect(first.status).toBe(201);
    const report = await first.json() as { file_id: string; outcomes: unknown; source: string };
    expect(report).toMatchObject({ status: "done", source: "http", outcomes: { ...noOutcomes, applied: 5 } });
    // The same status and body as the first answer (it was 200 before issue 33 item 6).
    const repeat = await upload("payroll.ach", fixture("ach/original.ach"), "upload-1");
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(await repeat.json()).toEqual(report);
  });

  it("refuses the same key with other bytes (422) and needs a key at all (400)", async () => {
    expect((await upload("payroll.ach", fixture("ach/corrected.ach"), "upload-1")).status).toBe(422);
    const keyless = await fetch(`${api.baseUrl}/v1/files?name=x.ach`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "text/plain" }, body: "101" });
    expect(keyless.status).toBe(400);
  });

  it("lists files and shows one with its per-record outcomes; the corrected upload's report names the record it drops", async () => {
    const payroll = await (await upload("payroll.ach", fixture("ach/original.ach"), "upload-1")).json() as { file_id: string };
    const corrected = await (await upload("corrected.ach", fixture("ach/corrected.ach"), "upload-2")).json() as { file_id: string; correction_of: string; dropped_records: unknown };
    expect(corrected).toMatchObject({ correction_of: payroll.file_id, dropped_records: {
      note: "in the original, absent from the correction: not reversed automatically", original_file_id: payroll.file_id, count: 1,
      records: [{ position: "line 5", natural_key: "ach:23138010:231380100000003:1234567890:PPD:250305", amount_minor: "30000", currency: "USD" }],
    } });
    const listed = await (await fetch(`${api.baseUrl}/v1/files?status=done`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { data: Array<{ name: string }> };
    // The oldest received first (issue 33 item 7: a list pages by its items' creation).
    expect(listed.data.map((f) => f.name)).toEqual(["payroll.ach", "corrected.ach"]);
    const shown = await (await fetch(`${api.baseUrl}/v1/files/${corrected.file_id}`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { record_outcomes: Array<{ outcome: string }> };
    expect(shown.record_outcomes.map((r) => r.outcome)).toEqual(["duplicate", "conflict", "duplicate", "duplicate", "applied"]);
    expect((await fetch(`${api.baseUrl}/v1/files/fil_nope`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(404);
  });
});

describe("clearline serve with zero configuration", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("creates the default tenant and partner, watches CLEARLINE_HOME/drop and serves the files API", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-zero-"));
    const serve = await startServeProcess({ DATABASE_URL: db.url, CLEARLINE_HOME: home });
    try {
      const apiKey = readFileSync(path.join(home, "default-tenant-api-key"), "utf8").trim();
      writeFileSync(path.join(home, "drop", "payroll.ach"), fixture("ach/original.ach"));
      await until(() => (existsSync(path.join(home, "drop", "processed", "payroll.ach")) ? true : undefined));
      const listed = await (await fetch(`${serve.baseUrl}/v1/files`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { data: Array<{ name: string; partner: string; outcomes: unknown }> };
      expect(listed.data).toMatchObject([{ name: "payroll.ach", partner: "default", outcomes: { ...noOutcomes, applied: 5 } }]);
    } finally {
      await serve.stop();
    }
  });
});
