import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

/**
 * One registry for the process, served at /metrics. Metrics are named for what an on-call
 * engineer asks ("how many repeats did we dedupe, and why?"), never for implementation details.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "clearline_process_" });

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
