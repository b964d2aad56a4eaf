// Bounds of the HTTP channel: every size, window and timeout, each with its unit and why.
export const httpLimits = {
  bodyBytesMax: 64 * 1024,              // a payment request is well under 1 KiB; 64 KiB leaves room for descriptions
  // Levels of objects and arrays in a JSON body: every route takes one flat object; 32 leaves
  // room, and any walk of a body (the text guard, zod) stays a few dozen frames deep.
  jsonDepthMax: 32,
  oversizeBodyDrainBytesMax: 8_388_608, // past a body bound, up to 8 MiB more is read and dropped so the client gets its 413, not a reset; beyond, the connection is closed
  // A caller's Request-Id kept as is up to this: a UUID is 36 characters, a W3C trace id 32.
  requestIdCharsMax: 128,
  // A list's page cursor: opaque base64url of the last item's key (an account id is at most a
  // few hundred characters); longer is refused, never decoded.
  pageCursorCharsMax: 1_024,
  // Items one page of a list of payments, refunds, files, a file's records, reviews, transfers or
  // reconciliation differences holds (GET /v1/...): one indexed range of at most this many rows
  // per request, a few hundred KiB of JSON; a client pages on with the cursor.
  listPageItemsMax: 1_000,
  listPageItemsDefault: 100,
  idempotencyKeyCharsMax: 255,          // as the IETF Idempotency-Key draft suggests; UUIDs are 36
  idempotencyWindowMs: 7 * 24 * 3_600_000, // responses replayed for 7 days; the intent protects the effect for ever
  idempotencyLeaseMs: 30_000,           // a claimed attempt that has not finished in 30 s is presumed dead
  claimLockTimeoutMs: 50,               // a concurrent duplicate waits at most this long on the key, then gets 409
  retryAfterSeconds: 1,                 // what a 409 in_progress tells the client to wait
  expiryBatchRowsMax: 1_000,            // rows the expiry job deletes per statement: short locks, bounded WAL
  expiryIntervalMs: 60_000,             // how often the expiry job runs
  auditBatchEventsMax: 1_000,           // replay audit rows group-committed in one insert; past it a caller writes alone
  paymentBatchRequestsMax: 64,          // first-time payments group-committed in one transaction (0043): a batch of 64 is one ledger statement of 128 legs, well under a file chunk
  paymentBatchesInFlightMax: 2,         // group-commit transactions open at once per process: one builds while one flushes its commit (2 cores); more only contend on debtors' row locks
  paymentBatchQueueMax: 512,            // callers waiting for the next batch; past it a caller runs alone on today's path (exact answer, no wait for several batches)
  repeatScreenBatchLookupsMax: 128,     // replay fast-path lookups in one statement (0054): one index probe each, a few hundred microseconds for the batch
  repeatScreenBatchesInFlightMax: 2,    // lookup statements in flight per process: one on the wire while the next batch gathers (2 cores)
  repeatScreenQueueMax: 2_048,          // requests waiting for a lookup; past it a request is looked up alone (same answer, no wait behind several batches)
  tenantCacheEntriesMax: 1_000,         // API key -> tenant lookups cached in memory
  // A backstop only: a revocation reaches every process by LISTEN/NOTIFY (decision 0097); this
  // bounds how long a cached key lives if a notification were ever missed with the link up.
  tenantCacheTtlMs: 60_000,
  // A lost LISTEN connection is opened again after 1 s; meanwhile no key is cached.
  apiKeyListenerRetryMs: 1_000,
  // The LISTEN connection is probed every 5 s: a silent partition is found, not trusted.
  apiKeyListenerHeartbeatMs: 5_000,
  apiKeyListenerProbeTimeoutMs: 2_000,  // a probe that takes longer counts as a lost connection
  // A key's last use is written at most once a minute per process, not once per request.
  apiKeyLastUseWriteIntervalMs: 60_000,
  // A rotation's old key works at most 30 days more: clients redeploy within a month.
  apiKeyOverlapMsMax: 30 * 86_400_000,
  apiKeyOverlapMsDefault: 86_400_000,   // 24 h: a day for every client to take the new key
  apiKeysPerTenantMax: 100,             // keys a list shows per tenant; more is a leak, not a need
  descriptionCharsMax: 140,             // a payment description is a remittance line, not a document
  clientReferenceCharsMax: 255,
  accountIdCharsMax: 64,
  reviewReasonCharsMax: 500,            // why a review was decided: a sentence or two, kept with the decision
  operatorCharsMax: 100,                // the person deciding: a login or a name
  statusRequestTimeoutMs: 5_000,        // `clearline status` gives up on a service that does not answer /readyz in 5 s
  readinessCheckTimeoutMs: 2_000,       // a /readyz check that takes longer counts as failing: probes time out at a few seconds
  operatorSessionTtlMs: 8 * 3_600_000, // a console session lasts a working day; then the operator signs in again
  operatorSecretBytes: 24,              // random bytes of a printed operator secret (192 bits, base64url)
  scryptCost: 16_384,                   // scrypt N for operator secrets: ~50 ms per sign-in, costly for a guesser with the table
  scryptBlockSize: 8,                   // scrypt r, the common recommendation with N = 2^14
  scryptKeyBytes: 32,                   // derived key length
} as const;
