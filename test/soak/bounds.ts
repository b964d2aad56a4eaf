/**
 * Every bound of the soak, with its unit and why it has its value. These bound the TEST; the
 * service's own limits live in src/config/limits.ts.
 */
export const soakBounds = {
  minutesMax: 24 * 60,           // a day-long soak is one command; the bound only catches a typo
  quietMinMs: 500,               // between a recovery and the next fault: the workload runs clean
  quietMaxMs: 2_000,             // (besides the steps during the checks before and after a fault)
  faultMinMs: 1_000,             // how long a fault stays before its heal
  faultMaxMs: 4_000,             // short enough that ten of each kind fit in 30 minutes (a cycle under 18 s)
  proxyDelayMinMs: 100,          // the fault proxy's delay per chunk toward and from PostgreSQL
  proxyDelayMaxMs: 1_500,
  stallAfterBytesMax: 4_096,     // a stall holds each connection's bytes after this many more (mid-frame)
  recoveryBoundMs: 90_000,       // after a heal: ready, answering, outbox drained, files done; past it a violation
  slowRecoveryMs: 30_000,        // a recovery longer than this is printed with its slowest condition
  probeTimeoutMs: 10_000,        // one readiness or balance probe during recovery
  probePauseMs: 100,             // between probes while recovering
  fullLedgerVerifyEvery: 10,     // every tenth check verifies the whole ledger (and its checkpoints); the rest from the last checkpoint
  checkAttemptsMax: 3,           // the checks' own reads are retried (a dead pooled socket of the checker is not the service's)
} as const;
