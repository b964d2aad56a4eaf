/**
 * Every bound of the simulation, named with its unit and why it has its value. These bound the
 * TEST, not the service (the service's own limits live in src/config/limits.ts).
 */
export const simBounds = {
  stepsDefault: 200,                 // a run of `npm run sim -- --seed S` without --steps: a few minutes on 2 cores
  stepsMax: 1_000_000,               // a long hunt is one command; the bound only catches a typo
  ciSeeds: [75, 133, 199],           // the fixed seeds `npm test` runs (test/sim/sim.test.ts): their first 12 steps hold kills, killed uploads, bursts, corrections and review decisions
  ciStepsPerSeed: 12,                // 3 x 12 steps: about 3 minutes on a busy 2-core machine (a restart after a kill costs seconds)
  burstPaymentsMax: 64,              // the 64 concurrent HTTP clients spending one customer's balance
  burstPaymentsMin: 8,               // fewer hardly race
  sameKeyConcurrentMax: 8,           // concurrent requests with one Idempotency-Key
  fileRecordsMax: 12,                // entries of one generated ACH file: enough for changed/added/dropped mixes
  isoBurstMax: 32,                   // concurrent 0100s on one connection (the endpoint allows 64 in flight)
  customers: 4,                      // customer accounts spent by payments, cards and ACH debits
  customerFundingMinor: 100_000n,    // 1,000.00 each at the start: the manual overdraft test
  paymentAmountMaxMinor: 5_000,      // single payments up to 50.00
  burstPaymentAmountMaxMinor: 4_000, // burst payments up to 40.00 each: 64 of them exceed a 1,000.00 balance
  isoAmountMaxMinor: 3_000,          // card authorizations up to 30.00
  achAmountMaxMinor: 20_000,         // ACH entries up to 200.00
  killDelayMaxMs: 250,               // a kill during a burst lands somewhere in its first quarter second
  projectionIntervalMs: 100,         // the service's projection job, as often as its config allows (min 100)
  projectionOffIntervalMs: 3_600_000, // --without-projection: the longest interval the config allows, so the job never runs in a run
  settleTimeoutMs: 180_000,          // waits for an event (a restart, a file resumed) give up only after minutes
  requestTimeoutMs: 120_000,         // an HTTP request without an answer is outcome unknown after this
  retryAttemptsMax: 60,               // a request asked again after an unknown outcome: 409 (in progress) waited out this many times
  retryPauseMs: 500,                 // between those attempts: 60 x 500 ms outlasts a dead process's claim
  isoResponseTimeoutMs: 30_000,      // the endpoint answers in milliseconds; no matching answer in 30 s on a loaded machine is no answer
} as const;
