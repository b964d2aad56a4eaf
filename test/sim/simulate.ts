import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Pool } from "../../src/db/pool.ts";
import { actions, actionWeights, type ActionKind } from "./actions/index.ts";
import { simBounds } from "./bounds.ts";
import { IsoLink, type SimContext } from "./context.ts";
import { createSimDatabase } from "./database.ts";
import { checkInvariants, type InvariantInput, type Violation } from "./invariants.ts";
import { minorText } from "./money.ts";
import { Prng, stepPrng } from "./prng.ts";
import { coverageLines, coverageOf, everyFileRecordOneOutcome } from "./progress.ts";
import { ServiceProcess } from "./service.ts";
import { setUpWorld } from "./setup.ts";
import { newWorld, type World } from "./world.ts";

export interface SimOptions {
  seed: number;
  steps: number;
  verbose?: boolean;
  withoutProjection?: boolean;       // the projection never advances: balances are read from the entries alone (separates the projection's defects from the rest)
  keepGoing?: boolean;               // report each new violation and go on (a hunt for every defect of one seed); exit 1 at the end
  adminDatabaseUrl?: string;         // else DATABASE_URL, else an embedded PostgreSQL
  out?: (line: string) => void;      // where the run's lines go (default stdout)
}

export interface SimResult {
  ok: boolean;
  seed: number;
  stepsRun: number;
  failedStep?: number;               // the first step with a violation
  failedAction?: ActionKind;
  violations: Violation[];
  actionsByKind: Record<string, number>;
  kills: number;
  moneyMovedMinor: bigint;
  coverage: Record<string, number>;  // cases drawn by kind (progress.ts)
  lines: string[];                   // what was printed: summary, or the failure report
}

/** Waits until no received file is left unfinished (a restart resumes them in the background): the step is then quiescent. */
export async function settleFiles(pool: Pool, tenantId: string): Promise<Violation[]> {
  const deadline = Date.now() + simBounds.settleTimeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ file_id: string; status: string }>(
      `SELECT file_id, status FROM received_file WHERE tenant_id = $1
         AND status IN ('received', 'processing') ORDER BY file_id`, [tenantId]);
    if (rows.length === 0) return [];
    if (Date.now() > deadline) {
      return rows.map((r) => ({ invariant: "everyReceivedFileFinishes", subject: `file ${r.file_id}`, expected: "done or rejected", found: `${r.status} after ${simBounds.settleTimeoutMs} ms` }));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function moneyMoved(pool: Pool, tenantId: string): Promise<bigint> {
  const { rows } = await pool.query<{ total: string }>("SELECT coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0)::text AS total FROM ledger_entry WHERE tenant_id = $1", [tenantId]);
  return BigInt(rows[0]?.total ?? "0");
}

/**
 * One seeded run: step 0 sets the world up, then each step picks an action from its own PRNG,
 * runs it to completion (every request of the step answered or known lost), waits for files to
 * settle, and checks every invariant against the database. The first violation ends the run.
 */
export async function runSimulation(options: SimOptions): Promise<SimResult> {
  const lines: string[] = [];
  const print = (line: string) => {
    lines.push(line);
    (options.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
  };
  const { seed, steps } = options;
  const database = await createSimDatabase(options.adminDatabaseUrl);
  const home = mkdtempSync(path.join(tmpdir(), "clearline-sim-home-"));
  const world = newWorld(seed);
  const service = new ServiceProcess({ databaseUrl: database.url, home, cardHashSecretHex: new Prng(seed, -1).hex(64),
    projectionIntervalMs: options.withoutProjection ? simBounds.projectionOffIntervalMs : simBounds.projectionIntervalMs }, database.pool);
  const iso = new IsoLink(service);
  const ctx: SimContext = { world, service, pool: database.pool, rng: stepPrng(seed, 0), projection: !options.withoutProjection, iso, log: (line) => { if (options.verbose) print(`    ${line}`); }, kills: true };
  const result: SimResult = { ok: true, seed, stepsRun: 0, violations: [], actionsByKind: world.actionsByKind, kills: 0, moneyMovedMinor: 0n, coverage: {}, lines };
  try {
    if (options.verbose) print(`sim seed=${seed} steps=${steps} on ${database.source} (database ${database.name})`);
    await service.start();
    await setUpWorld(ctx, new Prng(seed, -1).hex(64), home);
    const reported = new Set<string>();
    for (let step = 1; step <= steps; step++) {
      ctx.rng = stepPrng(seed, step);
      world.step = step;
      const kind = ctx.rng.weighted(actionWeights);
      world.actionsByKind[kind] = (world.actionsByKind[kind] ?? 0) + 1;
      const startedMs = Date.now();
      if (options.verbose) print(`step ${step}: ${kind}`);
      await actions[kind].run(ctx);
      const actedMs = Date.now();
      const violations = [...(await settleFiles(database.pool, world.tenantId)), ...(await checkAll(world, database.pool, service.baseUrl))];
      if (options.verbose) print(`    (${actedMs - startedMs} ms acting, ${Date.now() - actedMs} ms settling and checking)`);
      result.stepsRun = step;
      const fresh = violations.filter((v) => !reported.has(violationIdentity(v)));
      if (fresh.length === 0) continue;
      for (const v of fresh) reported.add(violationIdentity(v));
      if (result.ok) Object.assign(result, { ok: false, failedStep: step, failedAction: kind });
      result.violations.push(...fresh);
      printFailure(print, seed, step, kind, fresh, `${options.keepGoing ? " --keep-going" : ""}${options.withoutProjection ? " --without-projection" : ""}`);
      if (!options.keepGoing) break;
    }
    result.kills = service.kills;
    result.moneyMovedMinor = await moneyMoved(database.pool, world.tenantId);
    result.coverage = await coverageOf(world, database.pool, service.kills);
    const byKind = Object.entries(world.actionsByKind).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}=${n}`).join(" ");
    if (!result.ok && options.keepGoing) {
      print(`sim FAILED: seed ${seed}, ${result.stepsRun} steps, ${result.violations.length} violations (${[...new Set(result.violations.map((v) => v.invariant))].join(", ")}), first at step ${result.failedStep}; kills ${result.kills}, money moved ${minorText(result.moneyMovedMinor)} USD; actions: ${byKind}`);
    }
    if (result.ok) {
      print(`sim ok: seed ${seed}, ${result.stepsRun} steps, kills ${result.kills}, money moved ${minorText(result.moneyMovedMinor)} USD; actions: ${byKind}`);
    }
    for (const line of coverageLines(result.coverage)) print(line);
    return result;
  } finally {
    await iso.close();
    await service.stop().catch(() => undefined);
    // CLEARLINE_SIM_KEEP_DATABASE=1 leaves the database for a post-mortem (its name is printed with --verbose).
    if (process.env.CLEARLINE_SIM_KEEP_DATABASE === "1") await database.pool.end().catch(() => undefined);
    else await database.drop().catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}

/** The money invariants, then those of progress: promises broken during the step's actions, and each file record's one outcome. */
export async function checkAll(
  world: World, pool: Pool, baseUrl: string,
  options: Pick<InvariantInput, "ledgerVerify" | "timingMs"> = {},
): Promise<Violation[]> {
  const money = await checkInvariants({ world, pool, baseUrl, ...options });
  const startedMs = Date.now();
  const files = await everyFileRecordOneOutcome(world, pool);
  options.timingMs?.set("everyFileRecordOneOutcome", (options.timingMs.get("everyFileRecordOneOutcome") ?? 0) + Date.now() - startedMs);
  return [...money, ...world.progressBroken, ...files];
}

/** A violation already reported is not reported again at every later step (a skipped entry stays skipped); a new code on the same account is. */
export function violationIdentity(v: Violation): string {
  return `${v.invariant}|${v.subject}|${/^[A-Z_]+:/.exec(v.found)?.[0] ?? ""}`;
}

function printFailure(print: (line: string) => void, seed: number, step: number, kind: ActionKind, violations: Violation[], replayFlags: string): void {
  const names = [...new Set(violations.map((v) => v.invariant))];
  print(`SIMULATION FAILED: seed ${seed}, step ${step} (${kind}), invariant ${names.join(", ")}`);
  for (const v of violations.slice(0, 20)) print(`  ${v.invariant}: ${v.subject}: expected ${v.expected}, found ${v.found}`);
  if (violations.length > 20) print(`  ... and ${violations.length - 20} more`);
  // With --keep-going an earlier, different violation would stop a plain replay before this step.
  print(`replay: npm run sim -- --seed ${seed} --steps ${step}${replayFlags}`);
}

export function newSeed(): number {
  return randomBytes(4).readUInt32BE(0) % 1_000_000;
}
