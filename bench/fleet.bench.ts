import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createTenant } from "../src/tenants/tenants.ts";
import { median, percentile, type BenchReport, type BenchRow } from "./harness.ts";
import { benchDatabase, type BenchDatabase } from "./support/database.ts";
import { fundDebtors, httpLoader, type HttpLoader } from "./support/payments-load.ts";
import { startServeChild, type ServeChild } from "./support/serve-child.ts";

// `npm run bench -- fleet [--no-ha]`: POST /v1/payments against one and two `clearline serve`
// processes on one PostgreSQL, and the same through the HA cluster (npm run ha), each as a ratio
// against one process on one database measured in the same round. CLEARLINE_BENCH_HA_URL names a
// running cluster to use instead of bringing one up (and down) on port base 15720.
const REQUESTS = 2_000;     // payments per case and round
const ROUNDS = 3;
const CONCURRENCY = 32;     // clients in all, split evenly over the processes of a case
const DEBTORS = 64;         // many customers: row locks on one debtor do not serialize the run
const HA_PORT_BASE = "15720";  // apart from the HA tests' default port base (15400)

/** CPU seconds a process has used so far (user + system), from /proc; 0 once it is gone. */
function cpuSeconds(pid: number, ticksPerSecond: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime, fields 14 and 15 of the line (11 and 12 after the command's name)
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** The machine's busy and total CPU time so far, all cores (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, v) => sum + v, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

interface Target {
  label: string;
  db: BenchDatabase;
  apiKey: string;
  processes: ServeChild[];
}

interface CaseResult {
  paymentsPerSecond: number;
  latenciesMs: number[];
  serveCpuMsPerPayment: number;
  postgresCpuMsPerPayment: number;
  paymentsPerBatch: number;     // payments per group-commit transaction (docs/decisions/0043)
  machineBusyShare: number;
}

async function prepare(label: string, serverUrl?: string): Promise<Target> {
  const db = await benchDatabase(4, serverUrl);
  const tenant = await createTenant(db.pool, "bench");
  if (!tenant.ok) throw new Error(tenant.error.message);
  await fundDebtors(db.pool, tenant.value.tenantId, DEBTORS);
  // Both processes run throughout (the second idles in the one-process case): no case pays for
  // a process's start, its cold JIT or its new connections.
  const processes = [await startServeChild(db.url), await startServeChild(db.url)];
  return { label, db, apiKey: tenant.value.apiKey, processes };
}

/** Group-commit transactions of payments the processes committed so far (their /metrics). */
async function paymentBatches(processes: ServeChild[]): Promise<number> {
  let total = 0;
  for (const process of processes) {
    const text = await (await fetch(`${process.baseUrl}/metrics`)).text();
    const committed = /^clearline_payment_batches_total\{outcome="committed"\} (\d+)/m.exec(text);
    total += Number(committed?.[1] ?? 0);
  }
  return total;
}

/** The PostgreSQL server processes serving the target's database now (its processes' pools). */
async function backendPids(target: Target): Promise<number[]> {
  const { rows } = await target.db.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  return rows.map((row) => row.pid);
}

function loadJobs(target: Target, processes: ServeChild[], label: string) {
  const perProcess = REQUESTS / processes.length;
  return processes.map((process, p) => ({
    url: `${process.baseUrl}/v1/payments`,
    headers: { "content-type": "application/json", authorization: `Bearer ${target.apiKey}` },
    bodies: Array.from({ length: perProcess }, (_, i) => JSON.stringify({
      client_reference: `${label}-${p}-${i}`, amount: "1.00", currency: "USD",
      debtor_account: `payer-${i % DEBTORS}`, creditor_account: "merchant",
    })),
    keys: Array.from({ length: perProcess }, (_, i) => `${label}-${p}-key-${i}`),
    concurrency: CONCURRENCY / processes.length, expectStatus: 201, expectReplay: false,
  }));
}

async function runCase(
  target: Target, count: 1 | 2, label: string, loaders: HttpLoader[], ticksPerSecond: number,
): Promise<CaseResult> {
  const processes = target.processes.slice(0, count);
  const jobs = loadJobs(target, processes, label);
  const cpu = (pid: number) => cpuSeconds(pid, ticksPerSecond);
  const servePids = processes.map((process) => process.child.pid ?? 0);
  const pgBefore = new Map((await backendPids(target)).map((pid) => [pid, cpu(pid)]));
  const serveBefore = servePids.map(cpu);
  const batchesBefore = await paymentBatches(processes);
  const machineBefore = machineTicks();
  const started = process.hrtime.bigint();
  const results = await Promise.all(jobs.map((job, i) => (loaders[i] as HttpLoader).load(job)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const machineAfter = machineTicks();
  const serveCpu = servePids.reduce((sum, pid, i) => sum + cpu(pid) - (serveBefore[i] ?? 0), 0);
  const pgPids = await backendPids(target);
  const pgCpu = pgPids.reduce((sum, pid) => sum + cpu(pid) - (pgBefore.get(pid) ?? 0), 0);
  const batches = (await paymentBatches(processes)) - batchesBefore;
  return {
    paymentsPerSecond: REQUESTS / seconds,
    latenciesMs: results.flatMap((result) => result.latenciesMs),
    serveCpuMsPerPayment: (serveCpu * 1_000) / REQUESTS,
    postgresCpuMsPerPayment: (pgCpu * 1_000) / REQUESTS,
    paymentsPerBatch: REQUESTS / Math.max(1, batches),
    machineBusyShare: (machineAfter.busy - machineBefore.busy)
      / Math.max(1, machineAfter.total - machineBefore.total),
  };
}

/** The HA cluster's URL: the one named, or one brought up now (and its teardown). */
function haCluster(args: string[]): { url?: string; down(): void; why?: string } {
  const named = process.env.CLEARLINE_BENCH_HA_URL;
  if (named) return { url: named, down: () => undefined };
  if (args.includes("--no-ha")) return { down: () => undefined, why: "--no-ha" };
  const ha = (command: string, timeout?: number) => spawnSync("npm",
    ["run", "-s", "ha", "--", command, "--port-base", HA_PORT_BASE], { encoding: "utf8", timeout });
  const up = ha("up", 300_000);
  const down = () => { ha("down"); };
  const url = up.stdout.trim().split("\n").pop();
  if (up.status !== 0 || !url?.startsWith("postgres")) {
    down();
    const why = up.stderr.trim().split("\n").slice(-3).join(" / ");
    return { down: () => undefined, why: `npm run ha -- up failed: ${why}` };
  }
  return { url, down };
}

type Cases = Record<string, CaseResult[]>;

function detailRows(name: string, results: CaseResult[]): BenchRow[] {
  const latencies = results.flatMap((r) => r.latenciesMs);
  const of = (pick: (r: CaseResult) => number) => median(results.map(pick));
  return [
    { case: `  ${name}: latency p50 / p99`, value: percentile(latencies, 50),
      unit: `ms (p99 ${percentile(latencies, 99).toFixed(0)} ms)` },
    { case: `  ${name}: CPU per payment, serve processes`,
      value: of((r) => r.serveCpuMsPerPayment), unit: "ms" },
    { case: `  ${name}: CPU per payment, PostgreSQL backends`,
      value: of((r) => r.postgresCpuMsPerPayment), unit: "ms" },
    { case: `  ${name}: payments per group-commit transaction`,
      value: of((r) => r.paymentsPerBatch), unit: "payments" },
    { case: `  ${name}: machine CPU busy (all cores, every process)`,
      value: 100 * of((r) => r.machineBusyShare), unit: "%" },
  ];
}

function caseRows(cases: Cases, baselineName: string): BenchRow[] {
  const baseline = cases[baselineName] ?? [];
  const baselineRate = median(baseline.map((r) => r.paymentsPerSecond));
  return Object.entries(cases).flatMap(([name, results]) => {
    const rate = median(results.map((r) => r.paymentsPerSecond));
    if (name === baselineName) {
      const row = { case: `${name} (the baseline)`, value: rate, unit: "payments/s" };
      return [row, ...detailRows(name, results)];
    }
    const ratios = results
      .map((r, i) => r.paymentsPerSecond / (baseline[i]?.paymentsPerSecond ?? Number.NaN))
      .sort((a, b) => a - b);
    const range = `ratio min ${ratios[0]?.toFixed(2)} median ${median(ratios).toFixed(2)}`;
    return [{
      case: `${name} (${range})`, value: rate, unit: "payments/s", baseline: baselineRate,
      baselineCase: baselineName, ratio: median(ratios),
    }, ...detailRows(name, results)];
  });
}

async function measure(
  local: Target, cluster: Target | undefined, loaders: HttpLoader[],
): Promise<Cases> {
  const clockTicks = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim();
  const ticksPerSecond = Number(clockTicks) || 100;
  const cases: Cases = {};
  const record = async (name: string, target: Target, count: 1 | 2, label: string) => {
    (cases[name] ??= []).push(await runCase(target, count, label, loaders, ticksPerSecond));
  };
  // One untimed pass over both processes of each target: their first requests run cold.
  await runCase(local, 2, "warm-local", loaders, ticksPerSecond);
  if (cluster) await runCase(cluster, 2, "warm-ha", loaders, ticksPerSecond);
  for (let round = 0; round < ROUNDS; round++) {
    await record("1 serve process, one PostgreSQL", local, 1, `l1-${round}`);
    await record("2 serve processes, one PostgreSQL", local, 2, `l2-${round}`);
    if (!cluster) continue;
    await record("1 serve process, HA cluster", cluster, 1, `h1-${round}`);
    await record("2 serve processes, HA cluster", cluster, 2, `h2-${round}`);
  }
  return cases;
}

export async function run(args: string[]): Promise<BenchReport> {
  const loaders = [httpLoader(), httpLoader()];
  const local = await prepare("one PostgreSQL");
  const ha = haCluster(args);
  let cluster: Target | undefined;
  let cases: Cases;
  try {
    cluster = ha.url ? await prepare("HA cluster", ha.url) : undefined;
    cases = await measure(local, cluster, loaders);
  } finally {
    for (const target of [local, cluster]) {
      if (!target) continue;
      await Promise.all(target.processes.map((p) => p.stop()));
      await target.db.close();
    }
    await Promise.all(loaders.map((loader) => loader.close()));
    ha.down();
  }
  return {
    name: "fleet",
    rows: caseRows(cases, "1 serve process, one PostgreSQL"),
    notes: [
      `${REQUESTS} first-time POST /v1/payments per case and round, ${CONCURRENCY} keep-alive `
        + "clients split evenly over the case's processes (one load worker thread per process), "
        + `${ROUNDS} rounds, each case's ratio taken against the baseline of its round; two serve `
        + "processes run on each database throughout, the second idle in the one-process cases",
      "the HA cluster: PostgreSQL 15 under Patroni, three nodes on this machine, one synchronous "
        + "standby (synchronous_commit on), reached through HAProxy "
        + "(docs/operations/ha-cluster.md)",
      ...(ha.why ? [`HA cluster not measured: ${ha.why}`] : []),
      "serve processes, PostgreSQL (every node of the cluster), the load workers and other "
        + "sessions' work share this machine's cores: 'machine CPU busy' is all of it",
    ],
  };
}
