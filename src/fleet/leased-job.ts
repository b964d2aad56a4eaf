import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { fleetJobRuns } from "../observability/metrics-fleet.ts";
import type { LeasedWork } from "./fleet.ts";
import { claimJobPeriod } from "./job-runs.ts";
import type { Grant } from "./lease-store.ts";

export interface SingletonJob {
  name: string;                 // the lease's name, and the job's in fleet_job_run
  periodMs: number;
  /** One run; `firstOfGrant` is true for the first run after this process was granted the job. */
  run(context: { isStopped: () => boolean; firstOfGrant: boolean }): Promise<void>;
}

/**
 * A singleton job as leased work (docs/decisions/0072): while this process holds the job's lease
 * it ticks every quarter period and runs the job in each period it claims (claimJobPeriod: one
 * run per period across the fleet, never by a process whose grant was taken over). One run at a
 * time; a failed run is logged and the next period runs again. A period claimed by a holder that
 * died mid-run is not run again: each of these jobs catches up in its next run.
 */
export function leasedJob(pool: Pool, job: SingletonJob, logger: Logger): LeasedWork {
  const tickMs = Math.max(limits.fleet.jobTickMsMin, Math.floor(job.periodMs / 4));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let stopped = true;
  // A job that fails every tick (the database gone) is logged once per interval (0082).
  const failures = repeatedFailureLog(logger,
    "singleton job failed; it runs again in its next period");
  const runOnce = async (grant: Grant, firstOfGrant: boolean): Promise<boolean> => {
    const period = await claimJobPeriod(pool, grant, job.periodMs);
    if (period === undefined || stopped) return false;
    fleetJobRuns.inc({ job: job.name });
    await job.run({ isStopped: () => stopped, firstOfGrant });
    return true;
  };
  return {
    async start(grant) {
      stopped = false;
      let first = true;
      const tick = () => {
        if (busy || stopped) return;
        busy = true;
        running = runOnce(grant, first).then(
          (ran) => {
            if (ran) first = false;
            failures.succeeded();
          },
          (error: unknown) => {
            first = false;
            failures.failed(error, { job: job.name });
          },
        ).finally(() => {
          busy = false;
        });
      };
      timer = setInterval(tick, tickMs);
      timer.unref();
      tick();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      await running;
      failures.close();
    },
  };
}
