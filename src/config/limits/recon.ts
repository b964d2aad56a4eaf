// Bounds of reconciliation (src/recon): files, items, batches, runs, each with its unit and why.
export const reconLimits = {
  // One imported statement or partner file. A day of a busy settlement account is a few hundred
  // thousand entries (about 200 MB of camt.053); 512 MiB bounds what one import reads.
  fileBytesMax: 536_870_912,
  // Bytes read from a statement at a time (one read of the file, one push into its reader). An
  // import holds this, the reader's current entry (or CSV line) and one batch of items
  // (insertBatchItemsMax), whatever the file's size: it streams from the file (twice: once for
  // its SHA-256 identity, once to read it).
  readChunkBytes: 65_536,
  // Characters of one CSV line: a row of six fields with a long description fits many times. A
  // file with no line break is refused at this line, not held whole.
  csvLineCharsMax: 65_536,
  // Items (entries, rows, batch totals) in one import: the same order as the ISO 20022 reader's.
  itemsMax: 1_000_000,
  // Transactions (TxDtls) kept as parts of one batch entry: a payroll credit of a large employer.
  partsPerItemMax: 10_000,
  // Findings kept per import; the count goes on, the list stops.
  findingsMax: 100,
  // Items written per INSERT: one statement of a few MB, short row locks.
  insertBatchItemsMax: 5_000,
  // Items of both sides one run reads; a larger period is split. The set-based match (one statement,
  // src/recon/set-matching.ts) holds none of them in this process: only its leftovers are read
  // into memory, bounded by runLeftoversMax.
  runItemsMax: 2_000_000,
  // Items and transfers (together) the set-based pairing of one run may leave unpaired: those are
  // read and matched in memory (src/recon/matching.ts) at about 1.4 KB each with their result
  // (measured: 300,000 left, 420 MB of heap), so this bound holds a run to about 280 MB. A run that
  // leaves more is refused (RECON_RUN_LEFTOVERS_TOO_MANY) and stores nothing: a period where most
  // things do not pair is a problem to look at (a wrong account, a missing import) before matching.
  runLeftoversMax: 200_000,
  // Memory each hash of a run's statement may take (SET LOCAL work_mem, in MiB): at the default
  // 4 MiB a 100,000-entry run's grouping, joins and aggregates spill to disk. Two sides of
  // runItemsMax fit in about 200 MiB per operation; the run is one connection at a time.
  runWorkMemMb: 128,
  // Results written per INSERT when a run is stored.
  resultBatchRowsMax: 5_000,
  // A run finds the payment and the record of each transfer in its period by an index probe when
  // the table holds more than this many rows per such transfer, and by hashing the table when it
  // holds fewer (decision 0050): measured, a probe costs about what hashing 2.7 rows does.
  referenceProbeRowsPerTransfer: 4,
  // Records one incident perimeter takes: a bad day of one partner. Wider incidents are split by
  // channel, partner or key prefix, so each compensation batch stays reviewable.
  perimeterRecordsMax: 100_000,
  // How long a process trusts what it read of a source's pause: a pause by another process (the
  // CLI) takes effect within a second; this process's own pause at once.
  pauseCacheMs: 1_000,
} as const;
