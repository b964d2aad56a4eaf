/** What the soak counted for one fault kind (and, under "outside fault windows", for the rest). */
export interface KindStats {
  injected: number;
  violations: number;
  recoveryMs: number[];
  answers: Record<string, number>;   // "http 2xx", "http none", "iso8583 00", "iso8583 none", ...
}

/** The value at or below which `fraction` of the samples lie (nearest rank). */
export function percentile(samples: readonly number[], fraction: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

const seconds = (ms: number | undefined) => (ms === undefined ? "-" : `${(ms / 1000).toFixed(1)} s`);

function answersText(answers: Record<string, number>): string {
  const entries = Object.entries(answers).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? "none sent" : entries.map(([k, n]) => `${k}: ${n}`).join(", ");
}

/** The per-fault table, as Markdown (docs/operations/soak.md keeps one per run). */
export function reportLines(stats: ReadonlyMap<string, KindStats>, kinds: readonly string[]): string[] {
  const lines = [
    "| fault kind | injected | violations | recover p50 | recover p99 | requests answered (during its windows) |",
    "|---|---:|---:|---:|---:|---|",
  ];
  for (const kind of [...kinds, ...[...stats.keys()].filter((k) => !kinds.includes(k)).sort()]) {
    const s = stats.get(kind) ?? { injected: 0, violations: 0, recoveryMs: [], answers: {} };
    const injected = kinds.includes(kind) ? String(s.injected) : "-";
    lines.push(`| ${kind} | ${injected} | ${s.violations} | ${seconds(percentile(s.recoveryMs, 0.5))} | ${seconds(percentile(s.recoveryMs, 0.99))} | ${answersText(s.answers)} |`);
  }
  return lines;
}

/** The phases of a fault cycle, in ms summed over the run's faults (cycleLine prints them). */
export interface CyclePhases {
  faults: number;
  quiet: number;
  injecting: number;        // a check of the quiet steps, then injecting
  held: number;
  recovery: number;
  checked: number;          // until a quiet step was checked after the recovery
}

/**
 * Where a fault cycle's time went, on average: the schedule can inject only as many faults as
 * its cycles allow, and the issue asks for ten of each kind in thirty minutes.
 */
export function cycleLine(cycle: CyclePhases, checks: number, checkMsTotal: number): string {
  if (cycle.faults === 0) return "fault cycle: no fault completed";
  const mean = (ms: number) => `${(ms / cycle.faults / 1_000).toFixed(1)} s`;
  const total = cycle.quiet + cycle.injecting + cycle.held + cycle.recovery + cycle.checked;
  const checkMean = checks === 0 ? "-" : `${(checkMsTotal / checks / 1_000).toFixed(1)} s`;
  return `fault cycle, mean of ${cycle.faults}: ${mean(total)} = quiet ${mean(cycle.quiet)}`
    + ` + check and inject ${mean(cycle.injecting)} + held ${mean(cycle.held)}`
    + ` + recovery ${mean(cycle.recovery)} + until a checked quiet step ${mean(cycle.checked)}`
    + ` (a check: ${checkMean} on average, ${checks} checks)`;
}

/** Where a check's time goes: each part's mean per check, the costliest first. */
export function checkTimingLine(timingMs: Map<string, number>, checks: number): string {
  if (checks === 0) return "a check's time: no check ran";
  const parts = [...timingMs].sort(([, a], [, b]) => b - a)
    .map(([name, ms]) => `${name} ${(ms / checks / 1_000).toFixed(2)} s`);
  return `a check's time, mean of ${checks}: ${parts.join(", ")}`;
}
