export const ledgerLimits = {
  transferLegsMax: 64,             // a posting rule never needs more; bounds a single insert
  amountMinorMax: 10n ** 17n,      // leaves headroom under int8 (9.2e18) for sums of many entries
  projectionBatchEntriesMax: 50_000, // entries folded into the balance projection per step
  projectionLagEntriesMax: 100_000, // /readyz fails past this backlog: two projection steps behind means balances read stale
} as const;
