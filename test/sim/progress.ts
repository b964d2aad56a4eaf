import type { Pool } from "../../src/db/pool.ts";
import type { HttpOutcome } from "./http.ts";
import type { World } from "./world.ts";

/**
 * Invariants of progress, beside the money invariants of invariants.ts: what should have
 * succeeded did, no request failed (5xx or no answer) outside a fault the run injected, every
 * record of a file has exactly one outcome. And what the run covered, so that a seed that drew
 * no case of a kind says so instead of passing quietly.
 */

/** Where a request stood against the run's faults when it was sent. */
export interface RequestSpan {
  openAtStart: boolean;
  openedBefore: number;
}

export function startSpan(world: World): RequestSpan {
  return { openAtStart: world.faultWindowsOpen > 0, openedBefore: world.faultWindowsOpened };
}

/** Whether a fault window was open at any moment between the span's start and now. */
export function overlappedFault(world: World, span: RequestSpan): boolean {
  return span.openAtStart || world.faultWindowsOpen > 0 || world.faultWindowsOpened !== span.openedBefore;
}

export function openFaultWindow(world: World): void {
  world.faultWindowsOpen++;
  world.faultWindowsOpened++;
}

export function closeFaultWindow(world: World): void {
  world.faultWindowsOpen = Math.max(0, world.faultWindowsOpen - 1);
}

/** Runs `inject` (a kill and the restart after it) inside a fault window. */
export async function withFaultWindow<T>(world: World, inject: () => Promise<T>): Promise<T> {
  openFaultWindow(world);
  try {
    return await inject();
  } finally {
    closeFaultWindow(world);
  }
}

export function broke(world: World, invariant: string, subject: string, expected: string, found: string): void {
  world.progressBroken.push({ invariant, subject, expected, found });
}

export function covered(world: World, kind: string, count = 1): void {
  world.coverage[kind] = (world.coverage[kind] ?? 0) + count;
}

export function describeOutcome(outcome: HttpOutcome): string {
  if (outcome.kind === "unknown") return `no answer (${outcome.error})`;
  const code = typeof outcome.json?.code === "string" ? ` ${outcome.json.code}` : "";
  return `${outcome.status}${code}`;
}

/** A 5xx, or no answer at all, from a service no fault touched is a broken promise of availability. */
export function checkAnswered(world: World, what: string, outcome: HttpOutcome, span: RequestSpan): void {
  const failed = outcome.kind === "unknown" || outcome.status >= 500;
  world.observe?.("http", outcome.kind === "unknown" ? "none" : `${Math.floor(outcome.status / 100)}xx`, span);
  if (!failed) return;
  if (overlappedFault(world, span)) {
    covered(world, "failures inside fault windows");
    return;
  }
  broke(world, "noFailureOutsideFaultWindow", `${what} (step ${world.step})`, "an answer below 500", describeOutcome(outcome));
}

/** A request whose success the model knows is due (funds there, a valid file, an open review). */
export function expectSucceeded(world: World, what: string, succeeded: boolean, found: string, span: RequestSpan, why: string): void {
  if (succeeded || overlappedFault(world, span)) return;
  broke(world, "shouldSucceedDid", `${what} (step ${world.step})`, `success (${why})`, found);
}

/** The kinds of case a run should draw; each is printed, and a kind with none is named. */
const coverageKinds = [
  "payments applied", "payments declined for funds", "replays answered", "refunds applied",
  "files applied", "corrections applied", "records applied", "records duplicate", "records conflict",
  "records suspect", "records orphan", "reviews replace", "reviews apply_as_new", "reviews refuse",
  "compensations", "card approvals", "card declines", "reversals acknowledged", "kills",
] as const;

/** Reads what the database holds for the run's tenant, adds what the clients counted, and prints both. */
export async function coverageOf(world: World, pool: Pool, kills: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = { ...world.coverage, kills };
  const outcomes = await pool.query<{ outcome: string; n: number }>(
    `SELECT outcome, count(*)::int AS n FROM record_outcome WHERE tenant_id = $1 GROUP BY outcome`,
    [world.tenantId]);
  for (const row of outcomes.rows) counts[`records ${row.outcome}`] = row.n;
  const decisions = await pool.query<{ decision: string; n: number }>(
    `SELECT decision, count(*)::int AS n FROM review_decision WHERE tenant_id = $1 GROUP BY decision`,
    [world.tenantId]);
  for (const row of decisions.rows) counts[`reviews ${row.decision}`] = row.n;
  const compensations = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM compensation WHERE tenant_id = $1", [world.tenantId]);
  counts.compensations = compensations.rows[0]?.n ?? 0;
  return counts;
}

export function coverageLines(counts: Record<string, number>): string[] {
  const drawn = coverageKinds.filter((k) => (counts[k] ?? 0) > 0);
  const none = coverageKinds.filter((k) => (counts[k] ?? 0) === 0);
  const extra = Object.keys(counts).filter((k) => !(coverageKinds as readonly string[]).includes(k) && (counts[k] ?? 0) > 0).sort();
  const lines = [`coverage: ${[...drawn, ...extra].map((k) => `${k}=${counts[k]}`).join(", ")}`];
  lines.push(none.length === 0 ? "coverage: every kind drawn" : `coverage: this run drew NO case of: ${none.join(", ")}`);
  return lines;
}

interface FileCountRow {
  file_id: string;
  status: string;
  records_total: number | null;
  records_done: number;
  counted: number;
  outcomes: number;
  distinct_indexes: number;
  max_index: number | null;
}

/**
 * Every record of a finished file has exactly one outcome: as many outcome rows as the file has
 * records, one per index 1..N, and the file's counters add up to the same number. A valid file
 * the service accepted is `done`, not `rejected`.
 */
export async function everyFileRecordOneOutcome(world: World, pool: Pool): Promise<Array<{ invariant: string; subject: string; expected: string; found: string }>> {
  const { rows } = await pool.query<FileCountRow>(
    `SELECT f.file_id, f.status, f.records_total, f.records_done,
            (f.applied + f.duplicate + f.conflict + f.suspect + f.rejected + f.orphan)::int AS counted,
            count(o.record_index)::int AS outcomes, count(DISTINCT o.record_index)::int AS distinct_indexes,
            max(o.record_index) AS max_index
       FROM received_file f LEFT JOIN record_outcome o ON o.tenant_id = f.tenant_id AND o.file_id = f.file_id
      WHERE f.tenant_id = $1 AND f.status = 'done'
      GROUP BY f.file_id, f.status, f.records_total, f.records_done, counted
      ORDER BY f.file_id`, [world.tenantId]);
  const violations = [];
  for (const r of rows) {
    const total = r.records_total ?? -1;
    const fine = r.outcomes === total && r.distinct_indexes === total && (total === 0 || r.max_index === total)
      && r.counted === total && r.records_done === total;
    if (!fine) {
      violations.push({ invariant: "everyFileRecordOneOutcome", subject: `file ${r.file_id}`, expected: `${total} records, each one outcome`,
        found: `${r.outcomes} outcome rows (${r.distinct_indexes} indexes, last ${r.max_index ?? "none"}), counters ${r.counted}, done ${r.records_done}` });
    }
  }
  const accepted = world.files.filter((f) => f.fileId !== undefined).map((f) => f.fileId as string);
  const status = await pool.query<{ file_id: string; status: string }>(
    "SELECT file_id, status FROM received_file WHERE tenant_id = $1 AND file_id = ANY($2::text[])", [world.tenantId, accepted]);
  for (const r of status.rows.filter((row) => row.status === "rejected")) {
    violations.push({ invariant: "everyFileRecordOneOutcome", subject: `file ${r.file_id}`, expected: "done (a valid file the service accepted)", found: "rejected" });
  }
  return violations;
}
