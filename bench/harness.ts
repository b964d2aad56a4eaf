/**
 * Benchmarks report ratios against a baseline measured in the same run, on the same machine, so
 * that the figure means something whatever the hardware: "0.62x of raw pg", not "4,100/s".
 */
export interface BenchRow {
  case: string;        // what was measured, e.g. "postTransfer, 4 callers"
  value: number;       // the measured figure
  unit: string;        // "ops/s", "MB/s", "ms", "MB"
  baseline?: number;   // the baseline figure in the same unit
  baselineCase?: string;
  ratio?: number;      // value / baseline (or baseline / value where lower is better; say so in `case`)
  goal?: string;       // e.g. ">= 0.8"
}

export interface BenchReport {
  name: string;
  rows: BenchRow[];
  notes?: string[];
  /** Set by a bench run with --check when a goal was missed: `npm run bench` exits 1 with it. */
  failed?: string;
}

export type Benchmark = (args: string[]) => Promise<BenchReport>;

export function ratioRow(row: Omit<BenchRow, "ratio">, lowerIsBetter = false): BenchRow {
  const ratio = row.baseline === undefined || row.baseline === 0 ? undefined
    : lowerIsBetter ? row.baseline / row.value : row.value / row.baseline;
  return ratio === undefined ? { ...row } : { ...row, ratio };
}

/** Runs `fn` `count` times with at most `concurrency` in flight; returns operations per second. */
export async function throughput(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<{ opsPerSecond: number; latenciesMs: number[] }> {
  let next = 0;
  const latenciesMs: number[] = [];
  const started = process.hrtime.bigint();
  async function worker(): Promise<void> {
    while (next < count) {
      const i = next++;
      const t0 = process.hrtime.bigint();
      await fn(i);
      latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { opsPerSecond: count / seconds, latenciesMs };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? 0;
}

/** Peak resident set size of a child run, in MB, read from the kernel (VmHWM). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function format(n: number | undefined): string {
  if (n === undefined) return "";
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  return n.toPrecision(3);
}

/**
 * "met" or "MISSED" for a goal written ">= X", "<= X", "< X" or "> X" (against the ratio), or with
 * the row's unit after X ("< 250 MB": against the value); "" when it cannot tell.
 */
export function goalVerdict(row: BenchRow): string {
  const match = /^\s*(>=|<=|<|>)\s*([\d.]+)\s*(\S+)?/.exec(row.goal ?? "");
  if (!match) return "";
  const figure = match[3] !== undefined && match[3] === row.unit ? row.value : row.ratio;
  if (figure === undefined) return "";
  const target = Number(match[2]);
  const met = { ">=": figure >= target, "<=": figure <= target, "<": figure < target, ">": figure > target }[match[1] as ">=" | "<=" | "<" | ">"];
  return met ? "met" : "MISSED";
}

export function printReport(report: BenchReport): void {
  const header = ["case", "value", "unit", "baseline", "ratio", "goal"];
  const lines = report.rows.map((r) => [
    r.case, format(r.value), r.unit, r.baselineCase ? `${format(r.baseline)} (${r.baselineCase})` : format(r.baseline),
    r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}x`, r.goal ? `${r.goal} ${goalVerdict(r)}`.trimEnd() : "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const row = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(`\nbenchmark: ${report.name}`);
  console.log(row(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const l of lines) console.log(row(l));
  for (const note of report.notes ?? []) console.log(`note: ${note}`);
  console.log(JSON.stringify({ benchmark: report.name, rows: report.rows, notes: report.notes ?? [] }));
}

export interface AlternatedRounds {
  measured: number[];   // ops/s of the measured side, one per round
  baseline: number[];   // ops/s of the baseline, one per round
  ratios: number[];     // measured / baseline, round by round
}

/**
 * Runs the baseline and the measured side in turn (B A B A ...), `rounds` times each, so that a
 * machine whose speed drifts (other work, caches, autovacuum) hits both sides alike; the ratio
 * is taken round by round.
 */
export async function alternate(rounds: number, baseline: (round: number) => Promise<number>, measured: (round: number) => Promise<number>): Promise<AlternatedRounds> {
  const result: AlternatedRounds = { measured: [], baseline: [], ratios: [] };
  for (let round = 0; round < rounds; round++) {
    const b = await baseline(round);
    const m = await measured(round);
    result.baseline.push(b);
    result.measured.push(m);
    result.ratios.push(m / b);
  }
  return result;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** A row from alternated rounds: medians, with the range of the per-round ratios in the case. */
export function roundsRow(caseName: string, unit: string, baselineCase: string, rounds: AlternatedRounds, goal?: string): BenchRow {
  const ratios = [...rounds.ratios].sort((a, b) => a - b);
  return {
    case: `${caseName} (${ratios.length} rounds, ratio min ${ratios[0]?.toFixed(2)} median ${median(ratios).toFixed(2)})`,
    value: median(rounds.measured), unit, baseline: median(rounds.baseline), baselineCase, ratio: median(rounds.ratios),
    ...(goal ? { goal } : {}),
  };
}
