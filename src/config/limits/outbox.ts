// Bounds of the outbox relay, webhooks, NATS and the inbox (src/outbox), each with its unit and why.
export const outboxLimits = {
  // Rows one relay leases per pass: one short UPDATE ... FOR UPDATE SKIP LOCKED, delivered
  // concurrently; a second relay takes the next rows meanwhile.
  relayBatchRowsMax: 64,
  // Passes one relay runs at once: while one batch waits on its lease or mark commit (an fsync),
  // the other delivers. Deliveries in flight per relay: this times relayBatchRowsMax.
  relayPassesInFlight: 2,
  // A lease outlives the slowest delivery (deliveryTimeoutMs) with room for the mark, so a live
  // relay is never overtaken; a dead relay's rows are taken over after it.
  leaseMs: 30_000,
  // One delivery (an HTTP POST, a JetStream publish ack); after it the attempt failed.
  deliveryTimeoutMs: 10_000,
  // Attempts before a row is dead-lettered: with the backoff below about a day of retries.
  attemptsMax: 16,
  // Backoff after the first failed attempt; doubles per attempt, capped, with jitter.
  backoffBaseMs: 1_000,
  backoffCapMs: 3_600_000,
  // How long an idle relay waits before it looks again (a full batch looks again at once).
  relayIdlePollMs: 200,
  // Rows `clearline outbox list` prints.
  listRowsMax: 1_000,
  // Webhook endpoints of one tenant, and event types one endpoint subscribes to.
  webhookEndpointsPerTenantMax: 100,
  webhookEventTypesMax: 32,
  // A webhook body we sign and send, and a last_error kept on a row.
  webhookBodyBytesMax: 262_144,
  lastErrorCharsMax: 1_000,
  // Errors, and warnings, a file.processed event carries (each kept under 1,000 characters by
  // its reader, so 2 x 100 of them stay far below webhookBodyBytesMax); the file's whole list
  // is GET /v1/files/{id} (docs/decisions/0107).
  eventFindingsMax: 100,
  // Webhook secrets stored in clear (before migration 0027) sealed per statement by migrate or
  // serve: a tenant has at most 100 endpoints; a short statement each, however many tenants.
  webhookSecretsSealedPerStatementMax: 100,
  // The JetStream stream's bounds: retention by age and size, and the duplicate window in which
  // a republished Nats-Msg-Id is dropped (it must exceed the longest relay retry within reach of
  // a takeover: one lease plus a few backoffs).
  streamMaxAgeMs: 604_800_000,
  streamBytesMax: 1_073_741_824,
  streamDuplicateWindowMs: 600_000,
  // Inbox: payment requests one JetStream fetch takes, and how long a request may be worked on
  // before JetStream redelivers it.
  inboxFetchMessagesMax: 64,
  inboxAckWaitMs: 30_000,
} as const;
