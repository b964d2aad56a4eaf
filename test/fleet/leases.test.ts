import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import {
  acquireLease, claimJobPeriod, fenceOf, Fleet, jobRuns, leasedJob, LeaseLost, listLeases,
  releaseLease, renewLease, type Grant, type LeasedWork,
} from "../../src/fleet/index.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

const quiet = createLogger({
  destination: new Writable({ write(_chunk, _encoding, done) { done(); } }),
});

/** Waits (no deadline of its own) until the lease row's live holder is `holder`. */
async function untilHeldBy(pool: Pool, leaseName: string, holder: string): Promise<void> {
  await eventually(async () => {
    const lease = (await listLeases(pool)).find((l) => l.leaseName === leaseName && l.live);
    return lease?.holder === holder;
  });
}

/** A work that records when it starts and stops, in one timeline shared by a test's processes. */
function recordingWork(name: string, timeline: string[]): LeasedWork {
  return {
    async start() {
      timeline.push(`${name} start`);
    },
    async stop() {
      timeline.push(`${name} stop`);
    },
  };
}

describe("leases in fleet_lease", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  const ask = (leaseName: string, holder: string, leaseMs = 60_000) =>
    acquireLease(db.pool, { leaseName, holder, leaseMs });
  const granted = async (leaseName: string, holder: string, leaseMs = 60_000): Promise<Grant> => {
    const grant = await ask(leaseName, holder, leaseMs);
    if (grant === undefined) throw new Error(`${leaseName} was not granted to ${holder}`);
    return grant;
  };
  /** The lease runs out now, on the database's clock. */
  const runOut = (leaseName: string) =>
    db.pool.query("UPDATE fleet_lease SET lease_until = clock_timestamp() WHERE lease_name = $1",
      [leaseName]);

  it("grants a free lease with token 1, and refuses it to another holder while the lease runs",
    async () => {
    expect(await ask("free", "a")).toEqual({ leaseName: "free", holder: "a", token: 1n });
    expect(await ask("free", "b")).toBeUndefined();
    const [row] = (await listLeases(db.pool)).filter((l) => l.leaseName === "free");
    expect(row).toMatchObject({ holder: "a", token: 1n, live: true });
  });

  it("grants a lease that ran out to the next holder with the next token, naming the one before",
    async () => {
    expect((await granted("ran-out", "a", 200)).token).toBe(1n);
    let second: Grant | undefined;
    await eventually(async () => (second = await ask("ran-out", "b")) !== undefined);
    expect(second?.token).toBe(2n);
    const { rows } = await db.pool.query<{ previous_holder: string; taken_after_end: boolean }>(
      `SELECT previous_holder, acquired_at >= previous_lease_until AS taken_after_end
         FROM fleet_lease WHERE lease_name = 'ran-out'`);
    expect(rows[0]).toEqual({ previous_holder: "a", taken_after_end: true });
  });

  it("renews a held grant, and refuses to renew one that was taken over", async () => {
    const first = await granted("renewed", "a", 200);
    expect(await renewLease(db.pool, first, 60_000)).toBe(true);
    expect(await ask("renewed", "b")).toBeUndefined();
    await runOut("renewed");
    expect(await ask("renewed", "b")).toMatchObject({ token: 2n });
    expect(await renewLease(db.pool, first, 60_000)).toBe(false);
  });

  it("grants a released lease to the next holder at once", async () => {
    const first = await granted("released", "a");
    expect(await releaseLease(db.pool, first)).toBe(true);
    expect(await ask("released", "b")).toMatchObject({ token: 2n });
  });

  it("rolls back a fenced write of a grant taken over (FLEET_LEASE_LOST), not the holder's",
    async () => {
    await db.pool.query("CREATE TABLE fenced_write (who text)");
    const first = await granted("fenced", "a");
    await runOut("fenced");
    const second = await granted("fenced", "b");
    const write = (grant: Grant) => withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO fenced_write (who) VALUES ($1)", [grant.holder]);
      await fenceOf(grant)(tx);
    });
    await expect(write(first)).rejects.toBeInstanceOf(LeaseLost);
    await write(second);
    expect((await db.pool.query("SELECT who FROM fenced_write")).rows).toEqual([{ who: "b" }]);
  });
});

describe("a fleet's leases", () => {
  let db: TestDatabase;
  const pools: Pool[] = [];
  const newFleet = (holder: string, leaseMs: number) => {
    const pool = createPool(db.url, { max: 2 });
    pools.push(pool);
    return { fleet: new Fleet(pool, { holder, leaseMs, logger: quiet }), pool };
  };
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => {
    for (const pool of pools) await pool.end().catch(() => undefined);
    await db.drop();
  });

  it("runs a lease's work on one process of two, and on the other once the first stops",
    async () => {
    const timeline: string[] = [];
    const a = newFleet("a", 60_000);
    const b = newFleet("b", 60_000);
    a.fleet.hold("source", recordingWork("a", timeline));
    b.fleet.hold("source", recordingWork("b", timeline));
    a.fleet.start();
    await untilHeldBy(db.pool, "source", "a");
    b.fleet.start();
    await eventually(() => timeline.includes("a start"));
    await a.fleet.stop();
    await untilHeldBy(db.pool, "source", "b");
    await eventually(() => timeline.includes("b start"));
    await b.fleet.stop();
    expect(timeline).toEqual(["a start", "a stop", "b start", "b stop"]);
  });

  it("stops the work of a holder that cannot renew before another process is granted it",
    async () => {
    const timeline: string[] = [];
    const a = newFleet("a", 900);
    const b = newFleet("b", 900);
    a.fleet.hold("cut-off", recordingWork("a", timeline));
    a.fleet.start();
    await eventually(() => timeline.includes("a start"));
    // Its way to the database is gone: no renewal can land any more.
    await a.pool.end();
    b.fleet.hold("cut-off", recordingWork("b", timeline));
    b.fleet.start();
    await eventually(() => timeline.includes("b start"));
    expect(timeline).toEqual(["a start", "a stop", "b start"]);
    const [row] = (await listLeases(db.pool)).filter((l) => l.leaseName === "cut-off");
    expect(row).toMatchObject({ holder: "b", token: 2n, previousHolder: "a" });
    await b.fleet.stop();
    await a.fleet.stop().catch(() => undefined);
  });
});

describe("singleton jobs", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("claim each period once, and never with a grant that was taken over", async () => {
    const grant = async (holder: string) => {
      const lease = { leaseName: "job:once", holder, leaseMs: 60_000 };
      const granted = await acquireLease(db.pool, lease);
      if (granted === undefined) throw new Error("not granted");
      return granted;
    };
    const first = await grant("a");
    const period = await claimJobPeriod(db.pool, first, 3_600_000);
    expect(period).toBeInstanceOf(Date);
    expect(await claimJobPeriod(db.pool, first, 3_600_000)).toBeUndefined();
    await db.pool.query(
      "UPDATE fleet_lease SET lease_until = clock_timestamp() WHERE lease_name = 'job:once'");
    const second = await grant("b");
    expect(await claimJobPeriod(db.pool, first, 1_000)).toBeUndefined();
    expect(await claimJobPeriod(db.pool, second, 1_000)).toBeInstanceOf(Date);
  });

  it("run once per period across two processes contending for the job, by the lease's holder",
    async () => {
    const pools = [createPool(db.url, { max: 2 }), createPool(db.url, { max: 2 })];
    const runs: string[] = [];
    const fleets = ["a", "b"].map((holder, i) => {
      const fleet = new Fleet(pools[i] as Pool, { holder, leaseMs: 60_000, logger: quiet });
      const job = { name: "job:counted", periodMs: 100, run: async () => { runs.push(holder); } };
      fleet.hold("job:counted", leasedJob(db.pool, job, quiet));
      fleet.start();
      return fleet;
    });
    await eventually(() => runs.length >= 10);
    await Promise.all(fleets.map((fleet) => fleet.stop()));
    await Promise.all(pools.map((pool) => pool.end()));
    const recorded = await jobRuns(db.pool, "job:counted");
    // Every run claimed its own period first: as many rows as runs, one per period.
    expect(recorded.map((run) => run.holder)).toEqual(runs);
    expect(new Set(recorded.map((run) => run.periodStart.getTime())).size).toBe(recorded.length);
    expect(new Set(runs).size).toBe(1);
  });
});
