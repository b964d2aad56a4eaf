import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadWebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { actions, actionWeights } from "../sim/actions/index.ts";
import { simBounds } from "../sim/bounds.ts";
import { IsoLink, type SimContext } from "../sim/context.ts";
import { createSimDatabase } from "../sim/database.ts";
import type { Violation } from "../sim/invariants.ts";
import { Prng, stepPrng } from "../sim/prng.ts";
import { closeFaultWindow, coverageLines, coverageOf, openFaultWindow, overlappedFault, startSpan } from "../sim/progress.ts";
import { ServiceProcess } from "../sim/service.ts";
import { setUpWorld } from "../sim/setup.ts";
import { checkAll, settleFiles, violationIdentity } from "../sim/simulate.ts";
import { newWorld, type World } from "../sim/world.ts";
import { soakBounds } from "./bounds.ts";
import { soakActions } from "./actions.ts";
import { faultKinds, type FaultKind } from "./faults.ts";
import { recover } from "./recovery.ts";
import { checkTimingLine, cycleLine, reportLines, type CyclePhases, type KindStats } from "./report.ts";
import {
  sftpArchive, sftpFileDelivery, sftpInbox, sftpInboxTaken, sftpPartnerConfig, writeServeConfig,
} from "./sftp-partner.ts";
import { startTopology, type SoakTopology } from "./topology.ts";

export interface SoakOptions {
  seed: number;
  minutes: number;
  only?: string;                     // only the fault kinds whose name contains this (a hunt for one kind's defect)
  stopRequested?: () => boolean;     // true: end early, as at the deadline (a signal)
  out?: (line: string) => void;
}

export interface SoakResult {
  ok: boolean;
  violations: Violation[];
  stats: Map<string, KindStats>;
  lines: string[];
}

/** One async section at a time: the checks never run while a fault is being injected. */
class Lock {
  private tail: Promise<void> = Promise.resolve();
  run<T>(section: () => Promise<T>): Promise<T> {
    const result = this.tail.then(section);
    this.tail = result.then(() => undefined, () => undefined);
    return result;
  }
}

interface Shared {
  world: World;
  stats: Map<string, KindStats>;
  violations: Violation[];
  reported: Set<string>;
  lock: Lock;
  checksRun: number;
  checkWanted: boolean;     // the schedule asks for one check at the next quiet step boundary
  checkMsTotal: number;     // time inside the checks of quiet steps
  checkTimingMs: Map<string, number>;   // that time by invariant
  cycle: CyclePhases;       // where the schedule's time went, summed over its faults
  lastHealed: string;       // the fault kind a new violation is charged to
  current: string | undefined;
  kindOfWindow: Map<number, string>;   // fault window number (world.faultWindowsOpened) -> its kind
  stopping: boolean;
  print: (line: string) => void;
}

function statsOf(shared: Shared, kind: string): KindStats {
  let stats = shared.stats.get(kind);
  if (!stats) {
    stats = { injected: 0, violations: 0, recoveryMs: [], answers: {} };
    shared.stats.set(kind, stats);
  }
  return stats;
}

function charge(shared: Shared, violations: Violation[], kind = shared.lastHealed): void {
  const fresh = violations.filter((v) => !shared.reported.has(violationIdentity(v)));
  for (const v of fresh) {
    shared.reported.add(violationIdentity(v));
    shared.violations.push(v);
    statsOf(shared, kind).violations++;
    shared.print(`VIOLATION after ${kind}: ${v.invariant}: ${v.subject}: expected ${v.expected}, found ${v.found}`);
  }
}

/**
 * `npm run soak -- --seed S --minutes M`: the simulation's mixed workload runs step after step
 * against `serve`, whose peers sit in test hosts, while a fault schedule drawn from the seed
 * partitions, delays, stalls and kills. After every heal: recovery within a bound (ready, outbox
 * drained, files done), then the sim's money and progress invariants at the next quiet step.
 */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const lines: string[] = [];
  const print = (line: string) => {
    lines.push(line);
    (options.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
  };
  const home = mkdtempSync(path.join(tmpdir(), "clearline-soak-home-"));
  const topology = await startTopology(home);
  for (const folder of [sftpInbox, sftpArchive]) {
    mkdirSync(path.join(topology.sftp.root, folder), { recursive: true });
  }
  const database = await createSimDatabase(topology.adminSocketUrl);
  const world = newWorld(options.seed);
  const service = new ServiceProcess({
    databaseUrl: topology.serviceDatabaseUrl(database.name), home, cardHashSecretHex: new Prng(options.seed, -1).hex(64),
    projectionIntervalMs: simBounds.projectionIntervalMs, extraEnvironment: topology.serviceEnvironment,
  }, database.pool);
  const iso = new IsoLink(service);
  const ctx: SimContext = { world, service, pool: database.pool, rng: stepPrng(options.seed, 0), projection: true, iso, log: () => undefined, kills: false };
  const shared: Shared = { world, stats: new Map(), violations: [], reported: new Set(), lock: new Lock(), checksRun: 0, checkWanted: false, checkMsTotal: 0, checkTimingMs: new Map(), cycle: newCyclePhases(), lastHealed: "no fault yet", current: undefined, kindOfWindow: new Map(), stopping: false, print };
  // A request is charged to the last fault whose window it overlapped (it may answer after the heal).
  world.observe = (channel, result, span) => {
    const kind = overlappedFault(world, span) ? shared.kindOfWindow.get(world.faultWindowsOpened) ?? "kill inside a step" : "outside fault windows";
    const answers = statsOf(shared, kind).answers;
    const key = `${channel} ${result}`;
    answers[key] = (answers[key] ?? 0) + 1;
  };
  try {
    const { peers } = topology;
    print(`soak seed=${options.seed} minutes=${options.minutes}: postgres ${peers.postgres.host.address}, `
      + `NATS ${peers.nats.host.address}, scheme ${peers.scheme.host.address}, `
      + `webhooks ${peers.webhook.host.address}, SFTP ${peers.sftp.host.address}`);
    await service.start();
    await setUpWorld(ctx, new Prng(options.seed, -1).hex(64), home);
    // The SFTP source names the world's tenant and partner, which exist only now: serve is
    // started again with it configured.
    writeServeConfig(home, sftpPartnerConfig(topology, world.tenantId, world.partnerName));
    await service.stop();
    await service.start();
    await addWebhookEndpoint(database.pool, world.tenantId, topology.webhookUrl, ["payment.applied", "file.processed"], newSigningSecret(), loadWebhookSecretKeys({ home }));
    const kinds = faultKinds(topology, service).filter((k) => options.only === undefined || k.name.includes(options.only));
    if (kinds.length === 0) throw new Error(`no fault kind's name contains ${options.only}`);
    const deadline = Date.now() + options.minutes * 60_000;
    const workloadActions: WorkloadActions = {
      ...soakActions, sftp_file_delivery: { weight: 3, run: sftpFileDelivery(topology) },
    };
    const workload = runWorkload(ctx, shared, options.seed, workloadActions,
      () => sftpInboxTaken(topology));
    const ends = () => Date.now() >= deadline || options.stopRequested?.() === true;
    const startedMs = Date.now();
    await runSchedule(ctx, shared, kinds, options.seed, ends, topology);
    const endedEarly = Date.now() < deadline;
    if (endedEarly) {
      print(`ended early by a signal after ${Math.round((Date.now() - startedMs) / 1_000)} s`);
    }
    shared.stopping = true;
    await workload;
    // The end of the run is a heal like any other: what the last fault left must catch up.
    charge(shared, (await recover(ctx, Date.now(), topology)).violations, "end of run");
    charge(shared, await checkAll(world, database.pool, service.baseUrl), "end of run");
    for (const line of reportLines(shared.stats, kinds.map((k) => k.name))) print(line);
    print(cycleLine(shared.cycle, shared.checksRun, shared.checkMsTotal));
    print(checkTimingLine(shared.checkTimingMs, shared.checksRun));
    for (const line of coverageLines(await coverageOf(world, database.pool, service.kills))) print(line);
    const outbox = await database.pool.query<{ destination: string; state: string; n: number }>(
      `SELECT split_part(destination, ':', 1) AS destination, state, count(*)::int AS n FROM outbox_message
        WHERE tenant_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`, [world.tenantId]);
    print(`outbox: ${outbox.rows.map((r) => `${r.destination} ${r.state}=${r.n}`).join(", ") || "no message (a peer nobody sent to was not exercised)"}`);
    const ok = shared.violations.length === 0;
    const ran = endedEarly ? `${Math.round((Date.now() - startedMs) / 60_000)} of ${options.minutes} min (ended by a signal)` : `${options.minutes} min`;
    print(ok ? `soak ok: seed ${options.seed}, ${ran}, ${world.step} steps, 0 violations`
      : `SOAK FAILED: seed ${options.seed}, ${shared.violations.length} violations (${[...new Set(shared.violations.map((v) => v.invariant))].join(", ")})`);
    return { ok, violations: shared.violations, stats: shared.stats, lines };
  } finally {
    await iso.close();
    await service.stop().catch(() => undefined);
    await database.drop().catch(() => undefined);
    await topology.remove();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The soak's actions beside the sim's, each with its weight in the draw. */
type WorkloadActions = Record<string, { weight: number; run: (ctx: SimContext) => Promise<void> }>;

/** The sim's steps, one after another; at every step boundary outside a fault, settle and check. */
async function runWorkload(
  ctx: SimContext, shared: Shared, seed: number, soakOwn: WorkloadActions,
  quiesce: () => Promise<Violation[]>,
): Promise<void> {
  const { world, pool } = ctx;
  const workloadWeights: Record<string, number> = {
    ...actionWeights,
    ...Object.fromEntries(Object.entries(soakOwn).map(([kind, a]) => [kind, a.weight])),
  };
  for (let step = 1; !shared.stopping; step++) {
    // While serve is down (killed, not yet restarted) a client waits, as a real one would retry
    // later: steps are not burnt on refused connections.
    while (!ctx.service.running && !shared.stopping) await new Promise((resolve) => setTimeout(resolve, soakBounds.probePauseMs));
    ctx.rng = stepPrng(seed, step);
    world.step = step;
    const kind = ctx.rng.weighted(workloadWeights);
    world.actionsByKind[kind] = (world.actionsByKind[kind] ?? 0) + 1;
    const span = startSpan(world);
    try {
      const own = soakOwn[kind];
      await (own ?? actions[kind as keyof typeof actions]).run(ctx);
    } catch (error) {
      // The soak's own reads go over a unix socket no fault touches: a throw is the harness's or the service's.
      if (!overlappedFault(world, span)) charge(shared, [{ invariant: "stepCompleted", subject: `step ${step} (${kind})`, expected: "the step ran to its end", found: (error as Error).stack ?? String(error) }]);
    }
    if (world.faultWindowsOpen > 0 || !shared.checkWanted) continue;
    await shared.lock.run(async () => {
      if (world.faultWindowsOpen > 0) return;
      const checkStartedMs = Date.now();
      const taken = await quiesce();
      const settled = [...taken, ...(await settleFiles(pool, world.tenantId))];
      if (world.faultWindowsOpen > 0) return;
      const timingMs = shared.checkTimingMs;
      timingMs.set("quiesce and settle files", (timingMs.get("quiesce and settle files") ?? 0) + Date.now() - checkStartedMs);
      // The ledger is verified from its last checkpoint, and in full every few checks: a full
      // verify grows with the ledger and would leave less of the run for faults.
      const full = (shared.checksRun + 1) % soakBounds.fullLedgerVerifyEvery === 0;
      const ledgerVerify = full ? "full" as const : "incremental" as const;
      charge(shared, [...settled, ...(await checkAll(world, pool, ctx.service.baseUrl, { ledgerVerify, timingMs }))]);
      shared.checksRun++;
      shared.checkWanted = false;
      shared.checkMsTotal += Date.now() - checkStartedMs;
    });
  }
}

/** Asks for one check at the next quiet step boundary and waits until it ran (or the run stops). */
async function checkAtNextQuietStep(shared: Shared): Promise<void> {
  const checksBefore = shared.checksRun;
  shared.checkWanted = true;
  while (shared.checksRun === checksBefore && !shared.stopping) await sleep(soakBounds.probePauseMs);
}

/** The fault schedule: kinds in seeded rounds (each kind once per round, in a drawn order), each injected, held, healed and recovered from. */
async function runSchedule(
  ctx: SimContext, shared: Shared, kinds: FaultKind[], seed: number, ends: () => boolean,
  topology: SoakTopology,
): Promise<void> {
  const { world } = ctx;
  const rng = new Prng(seed, -2);
  let round: FaultKind[] = [];
  while (!ends()) {
    if (round.length === 0) round = rng.shuffle([...kinds]);
    const kind = round.pop() as FaultKind;
    const phase = phaseClock(shared.cycle);
    await sleep(rng.int(soakBounds.quietMinMs, soakBounds.quietMaxMs));
    phase("quiet");
    // The quiet steps are checked before the fault: what they broke is charged to the last heal.
    await checkAtNextQuietStep(shared);
    const holdMs = rng.int(soakBounds.faultMinMs, soakBounds.faultMaxMs);
    const injected = await shared.lock.run(async () => {
      openFaultWindow(world);
      shared.current = kind.name;
      shared.kindOfWindow.set(world.faultWindowsOpened, kind.name);
      return kind.inject(rng);
    });
    statsOf(shared, kind.name).injected++;
    phase("injecting");
    await sleep(holdMs);
    await injected.heal();
    phase("held");
    const healedAt = Date.now();
    const recovery = await recover(ctx, healedAt, topology);
    phase("recovery");
    statsOf(shared, kind.name).recoveryMs.push(recovery.recoveredMs);
    if (recovery.recoveredMs > soakBounds.slowRecoveryMs && recovery.slowest) {
      const { name, ms } = recovery.slowest;
      shared.print(`slow recovery after ${kind.name} (${injected.detail}): `
        + `${(recovery.recoveredMs / 1_000).toFixed(1)} s, ${(ms / 1_000).toFixed(1)} s of it until ${name}`);
    }
    shared.lastHealed = kind.name;
    charge(shared, recovery.violations.map((v) => ({ ...v, subject: `${v.subject} (after ${kind.name}: ${injected.detail}, held ${holdMs} ms)` })));
    shared.current = undefined;
    closeFaultWindow(world);
    // Every heal is followed by one check at a quiet step boundary before the next fault.
    await checkAtNextQuietStep(shared);
    phase("checked");
    shared.cycle.faults++;
  }
}

function newCyclePhases(): CyclePhases {
  return { faults: 0, quiet: 0, injecting: 0, held: 0, recovery: 0, checked: 0 };
}

/** Adds the time since its last call (or its making) to the named phase. */
function phaseClock(cycle: CyclePhases): (name: Exclude<keyof CyclePhases, "faults">) => void {
  let lastMs = Date.now();
  return (name) => {
    const nowMs = Date.now();
    cycle[name] += nowMs - lastMs;
    lastMs = nowMs;
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
