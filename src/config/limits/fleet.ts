// Bounds of a fleet of serve processes on one database (docs/decisions/0072): leases on the file
// sources, the singleton jobs and the outbound scheme link. The lease's length is configuration
// (fleetLeaseMs); these are the fixed parts around it.
export const fleetLimits = {
  // Default lease length. A holder renews every third of it (as Patroni's loop_wait is a third
  // of its ttl), so one renewal may fail and the next still lands in time; a dead holder's work
  // moves within lease + two renewal periods of its last renewal: 25 s by default.
  leaseMs: 15_000,
  // Shortest and longest lease a configuration may set: under 1 s a busy event loop or a slow
  // commit would lose leases of live processes; past 10 minutes a dead holder's files wait too
  // long.
  leaseMsMin: 1_000,
  leaseMsMax: 600_000,
  // Connections of the leases' own pool: renewals never queue behind the work's connections.
  poolConnectionsMax: 2,
  // Leases one listing (/fleet, clearline status, the console) shows.
  listRowsMax: 1_000,
  // Runs of a job kept per job in fleet_job_run; older ones are deleted with each claim.
  jobRunsKeptMax: 1_000,
  // A job's tick: a quarter of its period (at least this), so every period is claimed even when
  // the process's clock and the database's periods are out of phase.
  jobTickMsMin: 50,
} as const;
