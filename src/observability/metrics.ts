import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * One registry for the process, served at /metrics. Metrics are named for what an on-call
 * engineer asks ("how many repeats did we dedupe, and why?"), never for implementation details.
 */
export const registry = new Registry();
// The default metrics are already named process_* and nodejs_*: the prefix only adds ours.
collectDefaultMetrics({ register: registry, prefix: "clearline_" });

/**
 * Latency buckets in seconds, shared by the HTTP and ISO 8583 histograms: a card authorization
 * must answer well inside the scheme's few seconds, a payment in tens of milliseconds; the top
 * buckets catch a stalled database or scheme.
 */
export const latencyBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestDuration = new Histogram({
  name: "clearline_http_request_duration_seconds",
  help: "HTTP request latency, from the request's arrival to the response's last byte handed to the socket, by route template and status class",
  labelNames: ["method", "route", "status_class"] as const,
  buckets: latencyBucketsSeconds,
  registers: [registry],
});

/** A hit on ledger_entry's unique index means a key collision upstream: a bug. Must stay 0. */
export const ledgerEntryUniqueHits = new Counter({
  name: "clearline_ledger_entry_unique_index_hits_total",
  help: "Entries refused by the ledger's last-line unique index (a bug upstream; must stay zero)",
  registers: [registry],
});

export const ledgerTransfers = new Counter({
  name: "clearline_ledger_transfers_total",
  help: "postTransfer outcomes: applied, exists, exists_with_different_*",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** Compensation transfers posted (counted after their commit), by why: review_replace; incident tooling adds its reasons. */
export const compensations = new Counter({
  name: "clearline_compensations_total",
  help: "Transfers posted as keyed compensations of earlier transfers, by reason",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export const projectionLagDeltas = new Gauge({
  name: "clearline_ledger_projection_lag_deltas",
  help: "Balance delta rows (one per account and transfer) not yet folded into account_balance at the last advance",
  labelNames: ["tenant"] as const,
  registers: [registry],
});

export const dedupDecisions = new Counter({
  name: "clearline_dedup_decisions_total",
  help: "Repeats that were not applied again, by channel and reason",
  labelNames: ["channel", "reason"] as const,
  registers: [registry],
});

export const mutatingRequests = new Counter({
  name: "clearline_http_mutating_requests_total",
  help: "Mutating HTTP requests by whether they carried an Idempotency-Key (share missing = missing / total)",
  labelNames: ["endpoint", "idempotency_key"] as const,
  registers: [registry],
});

export const oldestInProgressAge = new Gauge({
  name: "clearline_idempotency_oldest_in_progress_age_seconds",
  help: "Age of the oldest in_progress idempotency record: the earliest sign of timeouts downstream",
  registers: [registry],
});

export const reconOpenDifferences = new Gauge({
  name: "clearline_recon_open_differences",
  help: "Reconciliation differences nobody has corrected or explained yet, by reason (theirs_only is the dangerous one)",
  labelNames: ["tenant", "reason"] as const,
  registers: [registry],
});

export const reconOldestOpenDifferenceSeconds = new Gauge({
  name: "clearline_recon_oldest_open_difference_seconds",
  help: "Age of the oldest open reconciliation difference (0 when none is open)",
  labelNames: ["tenant"] as const,
  registers: [registry],
});

export const reconCorrections = new Counter({
  name: "clearline_recon_corrections_total",
  help: "Reconciliation differences closed by a person, by decision (corrected with a keyed transfer, or explained)",
  labelNames: ["decision", "reason"] as const,
  registers: [registry],
});

/** Group-committed payment batches (docs/decisions/0043), by how they ended: committed, or failed as a whole and run again alone. */
export const paymentBatches = new Counter({
  name: "clearline_payment_batches_total",
  help: "Group-commit transactions of first-time payments, by outcome (committed; fallback: every caller run again alone; unknown: the COMMIT answer lost, every caller asks alone), and their requests",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** Lookup statements of the replay fast path (docs/decisions/0054): one per batch of concurrent requests, or one per request looked up alone past the queue's bound. */
export const repeatScreenBatches = new Counter({
  name: "clearline_repeat_screen_statements_total",
  help: "Statements of the idempotency replay fast path, by path (batch: the concurrent requests of one tenant and endpoint together; alone_queue_full: one request, the queue at its bound)",
  labelNames: ["path"] as const,
  registers: [registry],
});

export const paymentBatchRequests = new Counter({
  name: "clearline_payment_batch_requests_total",
  help: "First-time payment requests by how they were decided: in a committed batch, alone after a failed batch, alone after a batch of unknown outcome, or alone because the queue was full",
  labelNames: ["path"] as const,
  registers: [registry],
});
