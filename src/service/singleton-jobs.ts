import type { Config } from "../config/config.ts";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { resumeUnfinished } from "../files/pipeline.ts";
import { runReturnCutoffs } from "../files/return-cutoff-job.ts";
import { leasedJob, type Fleet, type SingletonJob } from "../fleet/index.ts";
import { deleteExpired, oldestInProgressAgeSeconds } from "../idempotency/records.ts";
import { advanceProjection, tenantsWithAccounts } from "../ledger/index.ts";
import type { Logger } from "../observability/logger.ts";
import { oldestInProgressAge } from "../observability/metrics.ts";

/** The names of the singleton jobs' leases (and of their rows in fleet_job_run). */
export const singletonJobNames = {
  balanceProjection: "job:balance-projection",
  returnCutoffs: "job:return-cutoffs",
  idempotencyExpiry: "job:idempotency-expiry",
  fileResume: "job:file-resume",
} as const;

/**
 * The periodic jobs of `clearline serve`, each run by one process of the fleet per period
 * (docs/decisions/0072): the balance projection, the partners' return cut-offs, the expiry of
 * idempotency records, and the resumption of files whose worker died. Each is also safe when two
 * runs overlap (a holder that lost its lease finishing a run): the projection folds with SKIP
 * LOCKED, a return cut is keyed by partner and cut-off, the expiry deletes what is expired, and a
 * file's chunks are fenced by its progress.
 */
export function holdSingletonJobs(fleet: Fleet, pool: Pool, config: Config, logger: Logger): void {
  const jobs: SingletonJob[] = [
    {
      name: singletonJobNames.balanceProjection, periodMs: config.projectionIntervalMs,
      async run({ isStopped }) {
        for (const tenantId of await tenantsWithAccounts(pool)) {
          if (isStopped()) return;
          await advanceProjection(pool, tenantId);
        }
      },
    },
    // ACH return files at each partner's configured cut-off (docs/decisions/0025).
    {
      name: singletonJobNames.returnCutoffs, periodMs: limits.partners.returnCutoffCheckIntervalMs,
      run: ({ isStopped }) => cutReturns(pool, config, logger, isStopped),
    },
    {
      name: singletonJobNames.idempotencyExpiry, periodMs: limits.http.expiryIntervalMs,
      async run() {
        await deleteExpired(pool);
        oldestInProgressAge.set(await oldestInProgressAgeSeconds(pool));
      },
    },
    {
      name: singletonJobNames.fileResume, periodMs: limits.ingest.rescanIntervalMs,
      run: (context) => resumeFiles(pool, config, logger, context),
    },
  ];
  for (const job of jobs) {
    fleet.hold(job.name, leasedJob(pool, job, logger.child({ component: "job", job: job.name })));
  }
}

async function cutReturns(
  pool: Pool, config: Config, logger: Logger, isStopped: () => boolean,
): Promise<void> {
  for (const outcome of await runReturnCutoffs(pool, config.returnCutoffs, new Date(), isStopped)) {
    const named = { tenant: outcome.tenant, partner: outcome.partner };
    if (outcome.error) logger.warn(named, outcome.error);
    else if (outcome.result?.kind === "cut") {
      const { fileName, entries, notSent } = outcome.result;
      const cut = { ...named, cutoffAt: outcome.cutoffAt, fileName, entries };
      if (notSent) logger.warn({ ...cut, notSent }, "return file cut, not sent");
      else logger.info(cut, "return file cut");
    }
  }
}

/**
 * Files left `received` or `processing`: the first run of a grant resumes every one of them (the
 * process that held the job, or the whole service, died: their workers are gone), later runs those
 * whose heartbeat is older than staleProcessingMs. A file a live process is still working on may
 * be run twice at once by the first run; its chunks are fenced by its progress (decision 0010).
 */
async function resumeFiles(
  pool: Pool, config: Config, logger: Logger,
  run: { isStopped: () => boolean; firstOfGrant: boolean },
): Promise<void> {
  const staleAfterMs = run.firstOfGrant ? 0 : limits.ingest.staleProcessingMs;
  const resumed = await resumeUnfinished(pool, {
    suspectWindowHours: config.ingest.suspectWindowHours, staleAfterMs, isStopped: run.isStopped,
  });
  if (resumed.length === 0) return;
  const files = resumed.map((r) => ({ fileId: r.file_id, status: r.status }));
  logger.info({ files }, "resumed files left unfinished");
}
