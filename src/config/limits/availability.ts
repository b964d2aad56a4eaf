// Bounds of staying up without a database (docs/decisions/0081, 0082): how often serve looks,
// how it backs off, how long it restarts an embedded server it owns, when /livez gives up, and
// how often a repeated failure is logged. Each value says its unit in its name and why.
export const availabilityLimits = {
  // A reachable database is asked `SELECT 1` this often: a dead one is seen within a second.
  databaseProbeIntervalMs: 1_000,
  // One probe: connect and answer. Under a busy start-up (initdb, migrations, two cores shared)
  // a sound server took over 2 s here; past 5 s it serves nobody well either.
  databaseProbeTimeoutMs: 5_000,
  // Probes of an unreachable database back off from this, doubling per failed probe...
  databaseRetryBackoffBaseMs: 250,
  // ...up to this: a database back is seen (and /readyz turns ready) within 2 s.
  databaseRetryBackoffCapMs: 2_000,
  // /livez fails once the database has been unreachable this long (CLEARLINE_LIVENESS_WITHOUT_
  // DATABASE_MS), so that a supervisor restarts the process: past a minute, a restart costs
  // less than waiting on whatever state this process is in (a wedged socket, a stale address).
  livenessWithoutDatabaseMs: 60_000,
  livenessWithoutDatabaseMsMin: 1_000,
  livenessWithoutDatabaseMsMax: 3_600_000,
  // An embedded server that died is started again at most this many times in a row; then serve
  // exits non-zero naming why (a data directory PostgreSQL refuses will not start on attempt 6).
  embeddedRestartAttemptsMax: 5,
  // Wait before each restart, doubling from this up to the cap: the orphaned backends of a
  // killed postmaster need a moment to notice and leave its shared memory (0.5+1+2+4+8 s).
  embeddedRestartBackoffBaseMs: 500,
  embeddedRestartBackoffCapMs: 8_000,
  // One restart of an existing data directory (crash recovery included): no initdb, so well
  // under the cold start's bound. Five attempts end within 5 x 20 s + 15.5 s of waits.
  embeddedRestartTimeoutMs: 20_000,
  // A failure repeated by a loop (a probe, an outbox pass, a lease renewal) is logged once when
  // it starts, then at most once per this with the count of attempts, then once when it ends.
  failureLogIntervalMs: 10_000,
  // Retry-After (seconds) on a 503 while the database does not answer: about one retry backoff.
  unavailableRetryAfterSeconds: 2,
} as const;
