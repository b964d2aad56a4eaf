import { existsSync, mkdtempSync, readdirSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestArrival } from "../../src/files/pipeline.ts";
import { LeaseLost } from "../../src/fleet/index.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { DropFolder, type DropFolderOptions } from "../../src/sources/drop-folder.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { fixture, givenScene, noOutcomes, writeGeneratedAch, type Scene } from "./support.ts";

const quiet = createLogger({ level: "silent" });

interface FileRow { file_id: string; arrival_key: string | null; status: string }

async function fileRows(db: TestDatabase, tenantId: string): Promise<FileRow[]> {
  const { rows } = await db.pool.query<FileRow>(
    `SELECT file_id, arrival_key, status FROM received_file
      WHERE tenant_id = $1 ORDER BY received_at`,
    [tenantId]);
  return rows;
}

async function transfers(db: TestDatabase, tenantId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1", [tenantId]);
  return rows[0]?.n ?? 0;
}

const batchName = (i: number) => `batch-${String(i).padStart(3, "0")}.ach`;

/** Files written under a temp name and renamed in, as a partner's copy does. */
async function dropFiles(folder: string, count: number, entries: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const partial = path.join(folder, `${batchName(i)}.part`);
    await writeGeneratedAch(partial, entries, i + 1, i * entries + 1);
    renameSync(partial, path.join(folder, batchName(i)));
  }
}

/** A drop folder of `scene` on `folder`, scanning often (a test waits for its moves). */
function dropFolderOf(
  db: TestDatabase, scene: Scene, folder: string, extra: Partial<DropFolderOptions> = {},
): DropFolder {
  return new DropFolder({
    pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, folder, logger: quiet,
    stableMs: 50, rescanIntervalMs: 50, ...extra,
  });
}

describe("a file a source found is received once, whichever processes find it (its claim)",
  () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  const arrivalOf = (scene: Scene, arrivalKey: string) => ({
    tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "drop_folder" as const,
    name: "payroll.ach", content: fixture("ach/original.ach"), arrivalKey,
  });

  it("makes one receipt when two processes receive the same arrival at once; both report that file",
    async () => {
    const scene = await givenScene(db.pool, "claim-race");
    const [first, second] = await Promise.all([
      ingestArrival(db.pool, arrivalOf(scene, "payroll.ach/1/2/3:4")),
      ingestArrival(db.pool, arrivalOf(scene, "payroll.ach/1/2/3:4")),
    ]);
    if (!first.ok || !second.ok) throw new Error("refused");
    expect(first.value.file_id).toBe(second.value.file_id);
    const receipt = {
      file_id: first.value.file_id, arrival_key: "payroll.ach/1/2/3:4", status: "done",
    };
    expect(await fileRows(db, scene.tenantId)).toEqual([receipt]);
    expect(first.value.outcomes).toEqual({ ...noOutcomes, applied: 5 });
  });

  it("receives an arrival with a new key (the same name dropped again later) as a file of its own",
    async () => {
    const scene = await givenScene(db.pool, "claim-again");
    const first = await ingestArrival(db.pool, arrivalOf(scene, "payroll.ach/1/100/3:4"));
    const again = await ingestArrival(db.pool, arrivalOf(scene, "payroll.ach/1/200/3:5"));
    if (!first.ok || !again.ok) throw new Error("refused");
    expect(again.value.file_id).not.toBe(first.value.file_id);
    expect(again.value.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
  });

  it("rolls a receipt back when its source's lease was lost, and keeps nothing of it", async () => {
    const scene = await givenScene(db.pool, "claim-fenced");
    const lost = ingestArrival(db.pool, {
      ...arrivalOf(scene, "payroll.ach/1/2/3:4"),
      fence: async () => { throw new LeaseLost("drop-folder:claim-fenced"); },
    });
    await expect(lost).rejects.toMatchObject({ code: "FLEET_LEASE_LOST" });
    expect(await fileRows(db, scene.tenantId)).toEqual([]);
  });
});

describe("two drop folders watching one folder (two processes without a lease)", () => {
  let db: TestDatabase;
  let scene: Scene;
  let folder: string;
  const folders: DropFolder[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "two-watchers");
    folder = mkdtempSync(path.join(tmpdir(), "clearline-two-watchers-"));
  });
  afterAll(async () => {
    await Promise.all(folders.map((f) => f.stop()));
    await db.drop();
  });

  it("receive each file once, apply each record once, and move each file once with its report",
    async () => {
    for (let i = 0; i < 2; i++) {
      const drop = dropFolderOf(db, scene, folder);
      await drop.start();
      folders.push(drop);
    }
    const files = 20;
    const entries = 30;
    await dropFiles(folder, files, entries);
    const processed = () => readdirSync(path.join(folder, "processed")).sort();
    await eventually(() => processed().filter((n) => n.endsWith(".ach")).length === files);
    const allDone = async () =>
      (await fileRows(db, scene.tenantId)).every((row) => row.status === "done");
    await eventually(allDone);
    // The other watcher may still be finding that the file it also finished was moved.
    await Promise.all(folders.map((drop) => drop.idle()));
    const rows = await fileRows(db, scene.tenantId);
    expect(rows).toHaveLength(files);
    expect(new Set(rows.map((row) => row.arrival_key)).size).toBe(files);
    expect(await transfers(db, scene.tenantId)).toBe(files * entries);
    // Each file beside its one report, under its own name: no second copy, no stray report.
    const names = Array.from({ length: files }, (_, i) => batchName(i));
    expect(processed()).toEqual(names.flatMap((name) => [name, `${name}.report.json`]).sort());
    expect(readdirSync(folder).filter((n) => n.endsWith(".ach"))).toEqual([]);
  });
});

describe("a drop folder stopped in the middle of a file", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("leaves the file in the folder, and the next process to watch it finishes that same receipt",
    async () => {
    const scene = await givenScene(db.pool, "stopped-mid-file");
    const folder = mkdtempSync(path.join(tmpdir(), "clearline-stopped-"));
    const entries = 600;
    const ingest = { chunkRecordsMax: 100 };
    let stopping: Promise<void> | undefined;
    // The first holder loses its lease right after its first chunk commits.
    const first: DropFolder = dropFolderOf(db, scene, folder, {
      ingest: { ...ingest, onProgress: () => { stopping ??= first.stop(); } },
    });
    await writeGeneratedAch(path.join(folder, "big.ach.part"), entries);
    await first.start();
    renameSync(path.join(folder, "big.ach.part"), path.join(folder, "big.ach"));
    await eventually(() => stopping !== undefined);
    await stopping;
    const [left] = await fileRows(db, scene.tenantId);
    expect(left?.status).toBe("processing");
    expect(existsSync(path.join(folder, "big.ach"))).toBe(true);

    const next = dropFolderOf(db, scene, folder, { ingest });
    await next.start();
    try {
      await eventually(() => existsSync(path.join(folder, "processed", "big.ach")));
    } finally {
      await next.stop();
    }
    expect(await fileRows(db, scene.tenantId)).toEqual([{ ...left, status: "done" }]);
    expect(await transfers(db, scene.tenantId)).toBe(entries);
  });
});
