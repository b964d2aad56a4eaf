// Bounds of reconciliation (src/recon): files, items, batches, runs, each with its unit and why.
export const reconLimits = {
  // One imported statement or partner file. A day of a busy settlement account is a few hundred
  // thousand entries (about 200 MB of camt.053); 512 MiB bounds what one import reads.
  fileBytesMax: 536_870_912,
  // Items (entries, rows, batch totals) in one import: the same order as the ISO 20022 reader's.
  itemsMax: 1_000_000,
  // Transactions (TxDtls) kept as parts of one batch entry: a payroll credit of a large employer.
  partsPerItemMax: 10_000,
  // Findings kept per import; the count goes on, the list stops.
  findingsMax: 100,
  // Items written per INSERT: one statement of a few MB, short row locks.
  insertBatchItemsMax: 5_000,
  // Items of both sides one run reads; a larger period is split. The set-based match (one statement,
  // src/recon/set-matching.ts) holds none of them in this process; what it leaves unpaired is read
  // and matched in memory, about 1.4 KB per item or transfer with its result (measured: 300,000
  // left, 420 MB of heap), so a period at this bound where nothing pairs would need some 3 GB.
  runItemsMax: 2_000_000,
  // Memory each hash of a run's statement may take (SET LOCAL work_mem, in MiB): at the default
  // 4 MiB a 100,000-entry run's grouping, joins and aggregates spill to disk. Two sides of
  // runItemsMax fit in about 200 MiB per operation; the run is one connection at a time.
  runWorkMemMb: 128,
  // Results written per INSERT when a run is stored.
  resultBatchRowsMax: 5_000,
  // Records one incident perimeter takes: a bad day of one partner. Wider incidents are split by
  // channel, partner or key prefix, so each compensation batch stays reviewable.
  perimeterRecordsMax: 100_000,
  // How long a process trusts what it read of a source's pause: a pause by another process (the
  // CLI) takes effect within a second; this process's own pause at once.
  pauseCacheMs: 1_000,
} as const;
