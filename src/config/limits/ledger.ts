export const ledgerLimits = {
  transferLegsMax: 64,             // a posting rule never needs more; bounds a single insert
  amountMinorMax: 10n ** 17n,      // leaves headroom under int8 (9.2e18) for sums of many entries
  projectionBatchEntriesMax: 50_000, // entries folded into the balance projection per step
  // Entries one statement read lists (the latest ones): a settlement account takes every
  // record's entry, so a statement is a window, never the whole history in one answer.
  statementEntriesMax: 1_000,
} as const;
