/**
 * The fleet room's front door (docs/decisions/0072): leases on the file sources, the singleton
 * jobs and the outbound scheme link of a fleet of `clearline serve` processes on one database,
 * with the fencing that keeps a process that lost a lease from writing for it.
 */
export {
  Fleet, LeaseLost, fenceOf, processHolderId, takeoverBoundMs, type FleetOptions, type LeasedWork,
} from "./fleet.ts";
export { leasedJob, type SingletonJob } from "./leased-job.ts";
export { claimJobPeriod, jobRuns, type JobRun } from "./job-runs.ts";
export {
  acquireLease, listLeases, releaseLease, renewLease, type Grant, type LeaseRow,
} from "./lease-store.ts";
