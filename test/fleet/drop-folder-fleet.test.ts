import { mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobRuns, listLeases, takeoverBoundMs, type LeaseRow } from "../../src/fleet/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";
import { givenTwin, writeGeneratedAch } from "../files/support.ts";

// Short leases, so the test sees a takeover within seconds; the bound is the configuration's.
const LEASE_MS = 3_000;
const FILES = 100;
const ENTRIES = 40;
const PROJECTION = "job:balance-projection";
const SINGLETON_JOBS = [
  PROJECTION, "job:file-resume", "job:idempotency-expiry", "job:return-cutoffs",
];

type Leases = Map<string, LeaseRow>;

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
      DATABASE_URL: db.url, CLEARLINE_DROP_FOLDER: folder,
      CLEARLINE_FLEET_LEASE_MS: String(LEASE_MS),
      CLEARLINE_PROJECTION_INTERVAL_MS: "200",
    });
    processes.push(started);
    return started;
  };
  const leases = async (): Promise<Leases> =>
    new Map((await listLeases(db.pool)).map((lease) => [lease.leaseName, lease]));
  const count = async (sql: string, tenantId: string) =>
    (await db.pool.query<{ n: number }>(sql, [tenantId])).rows[0]?.n ?? 0;
  const doneFiles = (tenantId: string) =>
    count("SELECT count(*)::int AS n FROM received_file WHERE tenant_id = $1 AND status = 'done'",
      tenantId);
  const inFolder = (where: string, suffix: string) =>
    readdirSync(where).filter((name) => name.endsWith(suffix));

  /** Files written under a temp name and renamed in, each with entries of its own. */
  async function dropFiles(): Promise<void> {
    for (let i = 0; i < FILES; i++) {
      const name = `partner-${String(i).padStart(3, "0")}.ach`;
      await writeGeneratedAch(path.join(folder, `${name}.part`), ENTRIES, i + 1, i * ENTRIES + 1);
      renameSync(path.join(folder, `${name}.part`), path.join(folder, name));
    }
  }

  /** Each file received once (one row, its own arrival), each record applied once, moved once. */
  async function expectEachFileOnce(tenantId: string): Promise<void> {
    type Counts = { n: number; keys: number; applied: number; other: number };
    const { rows } = await db.pool.query<Counts>(
      `SELECT count(*)::int AS n, count(DISTINCT arrival_key)::int AS keys,
              sum(applied)::int AS applied,
              sum(duplicate + conflict + suspect + rejected + orphan)::int AS other
         FROM received_file WHERE tenant_id = $1`, [tenantId]);
    expect(rows[0]).toEqual({ n: FILES, keys: FILES, applied: FILES * ENTRIES, other: 0 });
    expect(await count("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1", tenantId))
      .toBe(FILES * ENTRIES);
    expect(inFolder(folder, ".ach")).toEqual([]);
    expect(inFolder(path.join(folder, "processed"), ".report.json")).toHaveLength(FILES);
  }

  /** Every lease moved to the survivor, next token, within its bound on the database's clock. */
  function expectLeasesMoved(before: Leases, after: Leases, survivor: ServeProcess): void {
    for (const [name, row] of after) {
      expect(row.holderAddress, name).toBe(survivor.baseUrl);
      expect(row.token, name).toBe((before.get(name)?.token ?? 0n) + 1n);
      expect(row.previousHolder, name).toBe(before.get(name)?.holder);
      const lastRenewalMs = row.previousRenewedAt?.getTime() ?? Number.NaN;
      const movedAfterMs = row.acquiredAt.getTime() - lastRenewalMs;
      expect(movedAfterMs, name).toBeLessThanOrEqual(takeoverBoundMs(LEASE_MS));
    }
  }

  /** The projection ran once per period across both: the first's periods, then the survivor's. */
  async function expectJobRunsHandedOver(before: Leases, after: Leases): Promise<void> {
    const runs = await jobRuns(db.pool, PROJECTION);
    const holders = runs.map((run) => run.holder);
    const handover = holders.indexOf(after.get(PROJECTION)?.holder ?? "");
    expect(handover).toBeGreaterThan(0);
    expect(new Set(holders.slice(0, handover))).toEqual(new Set([before.get(PROJECTION)?.holder]));
    expect(new Set(holders.slice(handover))).toEqual(new Set([after.get(PROJECTION)?.holder]));
    expect(new Set(runs.map((run) => run.periodStart.getTime())).size).toBe(runs.length);
    expect(new Set(runs.slice(handover).map((run) => run.token)))
      .toEqual(new Set([after.get(PROJECTION)?.token]));
  }

  it(`ingests ${FILES} dropped files once each while the source's holder is killed, `
    + "and the leases move within their bound", async () => {
    const scene = await givenTwin(db.pool, "default", "default");
    const names = [`drop-folder:default/default:${folder}`, ...SINGLETON_JOBS];
    const first = await serve();
    await eventually(async () => {
      const held = await leases();
      return names.every((name) => held.get(name)?.holderAddress === first.baseUrl);
    });
    const second = await serve();
    const before = await leases();
    // Everything is the first process's: it started alone.
    for (const row of before.values()) expect(row.holderAddress).toBe(first.baseUrl);

    await dropFiles();
    // Killed in the middle of the batch, whatever it was doing (receipt, chunk, move).
    await eventually(async () => (await doneFiles(scene.tenantId)) >= FILES / 5);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();
    await eventually(() => inFolder(path.join(folder, "processed"), ".ach").length === FILES);
    await eventually(async () => (await doneFiles(scene.tenantId)) === FILES);

    await expectEachFileOnce(scene.tenantId);
    const after = await leases();
    expectLeasesMoved(before, after, second);
    await expectJobRunsHandedOver(before, after);
  });
});
