import { mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobRuns, listLeases, takeoverBoundMs, type LeaseRow } from "../../src/fleet/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";
import { givenTwin, writeGeneratedAch } from "../ingest/support.ts";

// Short leases, so the test sees a takeover within seconds; the bound is the configuration's.
const LEASE_MS = 3_000;
const FILES = 100;
const ENTRIES = 40;
const SINGLETON_JOBS = ["job:balance-projection", "job:file-resume", "job:idempotency-expiry", "job:return-cutoffs"];

describe("a fleet of two serve processes on one database and one drop folder", () => {
  let db: TestDatabase;
  let folder: string;
  const processes: ServeProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    folder = mkdtempSync(path.join(tmpdir(), "clearline-fleet-drop-"));
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await db.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  const serve = async () => {
    const started = await startServeProcess({
      DATABASE_URL: db.url, CLEARLINE_DROP_FOLDER: folder, CLEARLINE_FLEET_LEASE_MS: String(LEASE_MS),
      CLEARLINE_PROJECTION_INTERVAL_MS: "200",
    });
    processes.push(started);
    return started;
  };
  const leases = async (): Promise<Map<string, LeaseRow>> => new Map((await listLeases(db.pool)).map((l) => [l.leaseName, l]));
  const doneFiles = async (tenantId: string) => (await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM ingest_file WHERE tenant_id = $1 AND status = 'done'", [tenantId])).rows[0]?.n ?? 0;

  it(`ingests ${FILES} dropped files once each while the source's holder is killed, and the leases move within their bound`, async () => {
    const scene = await givenTwin(db.pool, "default", "default");
    const dropLease = `drop-folder:default/default:${folder}`;
    const first = await serve();
    const names = [dropLease, ...SINGLETON_JOBS];
    await eventually(async () => {
      const held = await leases();
      return names.every((name) => held.get(name)?.holderAddress === first.baseUrl);
    });
    const second = await serve();
    const before = await leases();
    // Everything is the first process's: it started alone.
    for (const row of before.values()) expect(row.holderAddress).toBe(first.baseUrl);

    for (let i = 0; i < FILES; i++) {
      const name = `partner-${String(i).padStart(3, "0")}.ach`;
      await writeGeneratedAch(path.join(folder, `${name}.part`), ENTRIES, i + 1, i * ENTRIES + 1);
      renameSync(path.join(folder, `${name}.part`), path.join(folder, name));
    }
    // Killed in the middle of the batch, whatever it was doing (receipt, chunk, move).
    await eventually(async () => (await doneFiles(scene.tenantId)) >= FILES / 5);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();

    await eventually(() => readdirSync(path.join(folder, "processed")).filter((n) => n.endsWith(".ach")).length === FILES);
    await eventually(async () => (await doneFiles(scene.tenantId)) === FILES);

    // Each file received once (one row, its own arrival), each record applied once.
    const { rows: files } = await db.pool.query<{ n: number; keys: number; applied: number; other: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT arrival_key)::int AS keys, sum(applied)::int AS applied,
              sum(duplicate + conflict + suspect + rejected + orphan)::int AS other
         FROM ingest_file WHERE tenant_id = $1`, [scene.tenantId]);
    expect(files[0]).toEqual({ n: FILES, keys: FILES, applied: FILES * ENTRIES, other: 0 });
    const { rows: transfers } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1", [scene.tenantId]);
    expect(transfers[0]?.n).toBe(FILES * ENTRIES);
    expect(readdirSync(folder).filter((n) => n.endsWith(".ach"))).toEqual([]);
    expect(readdirSync(path.join(folder, "processed")).filter((n) => n.endsWith(".report.json"))).toHaveLength(FILES);

    // Every lease moved to the survivor, with the next token, within its bound on the database's clock.
    const after = await leases();
    for (const [name, row] of after) {
      expect(row.holderAddress, name).toBe(second.baseUrl);
      expect(row.token, name).toBe((before.get(name)?.token ?? 0n) + 1n);
      expect(row.previousHolder, name).toBe(before.get(name)?.holder);
      const movedAfterMs = row.acquiredAt.getTime() - (row.previousRenewedAt?.getTime() ?? Number.NaN);
      expect(movedAfterMs, name).toBeLessThanOrEqual(takeoverBoundMs(LEASE_MS));
    }

    // The singleton jobs ran once per period across both: the first's periods, then the survivor's.
    const projection = await jobRuns(db.pool, "job:balance-projection");
    const holders = projection.map((run) => run.holder);
    const handover = holders.indexOf(after.get("job:balance-projection")?.holder ?? "");
    expect(handover).toBeGreaterThan(0);
    expect(new Set(holders.slice(0, handover))).toEqual(new Set([before.get("job:balance-projection")?.holder]));
    expect(new Set(holders.slice(handover))).toEqual(new Set([after.get("job:balance-projection")?.holder]));
    expect(new Set(projection.map((run) => run.periodStart.getTime())).size).toBe(projection.length);
    expect(new Set(projection.slice(handover).map((run) => run.token))).toEqual(new Set([after.get("job:balance-projection")?.token]));
  });
});
