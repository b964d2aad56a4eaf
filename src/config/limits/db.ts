// Database bounds. Each value says its unit in its name and why it is what it is.
export const dbLimits = {
  poolConnectionsMax: 10,          // per process; PostgreSQL default max_connections is 100
  connectTimeoutMs: 10_000,        // a database that does not answer in 10 s is down for us
  statementTimeoutMs: 60_000,      // no single statement of ours should run a minute
  sessionLockTimeoutMs: 60_000,    // our sessions' lock waits, bounded as statements are; set at connect (not
                                   // left to the server's default) so a claim restores it in its own statement (0051)
  idleInTransactionTimeoutMs: 60_000, // a stuck transaction must not hold row locks forever
  migrationLockTimeoutMs: 120_000, // a second process waits this long for another's migration
  // A migration's statements wait at most this long for a table lock: payments queue behind a
  // waiting ALTER, so its wait is theirs (docs/decisions/0083); then it retries after a pause.
  migrationStatementLockTimeoutMs: 200,
  migrationLockAttemptsMax: 150,   // tries of one migration that timed out on a lock (about 1 min)
  migrationLockRetryMs: 200,       // the pause before the next try, payments run meanwhile
  // An index build on a large table takes minutes, not hours.
  migrationStatementTimeoutMs: 3_600_000,
  migrationBatchRowsMax: 5_000,    // rows per backfill transaction: row locks held for milliseconds
  embeddedStartTimeoutMs: 60_000,  // initdb + start of the embedded server on a cold disk
  embeddedStopTimeoutMs: 30_000,   // a fast shutdown (SIGINT) of an adopted server; then SIGKILL
  embeddedStopPollMs: 50,          // how often a stop checks whether the server's process is gone
  embeddedLogLinesKept: 20,        // the server's last log lines, quoted when it fails to start
  // A COMMIT's answer, the standby's flush included; past it the outcome is unknown (0078):
  // above the waits seen with a standby streaming, below an HTTP client's usual 30 s.
  commitWaitMs: 15_000,
  keepAliveInitialDelayMs: 10_000, // TCP keepalive: a primary gone without a reset is found dead
  transactionRetriesMax: 5,        // serialization/deadlock retries before surfacing the failure
  transactionRetryBackoffMs: 20,   // first backoff; doubles per retry
} as const;
