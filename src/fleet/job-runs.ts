import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import type { Grant } from "./lease-store.ts";

/**
 * Claims the current period of a singleton job for `grant` (the job's lease; its name is the
 * job's): one row per job and period, written only while the grant holds the lease on the
 * database's clock. So a job runs once per period across the fleet: a second claim of the period
 * finds the row, and a process whose lease was taken over claims nothing. Periods are counted
 * from the epoch on the database's clock, so every process agrees where one ends. Rows older than
 * jobRunsKeptMax periods are deleted by the same statement. Returns the period's start, or
 * undefined when there is nothing to run.
 */
export async function claimJobPeriod(
  db: Queryable, grant: Grant, periodMs: number,
): Promise<Date | undefined> {
  const { rows } = await db.query<{ period_start: Date }>(
    `WITH period AS (
       SELECT to_timestamp(floor(extract(epoch FROM clock_timestamp()) * 1000 / $4) * $4 / 1000.0)
                AS start
     ), pruned AS (
       DELETE FROM fleet_job_run
        WHERE job_name = $1
          AND period_start < clock_timestamp() - make_interval(secs => $4 * $5 / 1000.0)
     )
     INSERT INTO fleet_job_run (job_name, period_start, holder, token)
     SELECT $1, period.start, $2, $3 FROM period
      WHERE EXISTS (SELECT 1 FROM fleet_lease
                     WHERE lease_name = $1 AND holder = $2 AND token = $3
                       AND lease_until > clock_timestamp())
     ON CONFLICT (job_name, period_start) DO NOTHING
     RETURNING period_start`,
    [grant.leaseName, grant.holder, grant.token, periodMs, limits.fleet.jobRunsKeptMax],
  );
  return rows[0]?.period_start;
}

export interface JobRun {
  periodStart: Date;
  holder: string;
  token: bigint;
}

/** A job's runs, oldest first (tests and the operator's view of who ran what). */
export async function jobRuns(db: Queryable, jobName: string): Promise<JobRun[]> {
  const { rows } = await db.query<{ period_start: Date; holder: string; token: bigint }>(
    `SELECT period_start, holder, token FROM fleet_job_run
      WHERE job_name = $1 ORDER BY period_start LIMIT $2`,
    [jobName, limits.fleet.jobRunsKeptMax],
  );
  return rows.map((row) => ({
    periodStart: row.period_start, holder: row.holder, token: row.token,
  }));
}
