export const ledgerLimits = {
  transferLegsMax: 64,             // a posting rule never needs more; bounds a single insert
  amountMinorMax: 10n ** 17n,      // leaves headroom under int8 (9.2e18) for sums of many entries
  projectionBatchDeltasMax: 20_000, // delta rows folded per step: one short transaction, a few MB of RETURNING
  projectionStepsMax: 1_000,       // steps per advance, so one advance of a backlog ends and the job yields
  // Entries one statement read lists (the latest ones): a settlement account takes every
  // record's entry, so a statement is a window, never the whole history in one answer.
  statementEntriesMax: 1_000,
  // Entries one end-of-day camt.053 holds (issue 30 item 5): read in one statement and written
  // as one document of about 1 KB an entry; a day past it is refused (pages are not written).
  dayStatementEntriesMax: 50_000,
  // Accounts one listing shows (the operations API and the console), first by id: a page for
  // people, never a walk of the table.
  accountsListedMax: 1_000,
  // Accounts one page of GET /v1/accounts holds; a client pages on with the cursor.
  accountsPageMax: 1_000,
  accountsPageDefault: 100,
  // One statement of `ledger verify --full` groups every entry of the ledger: about 20 s at
  // 4,000,000 entries on a quiet 2-core machine, several times that beside other work. The
  // pool's one-minute bound is for the service's statements, not this batch check.
  verifyStatementTimeoutMs: 1_800_000,
  projectionLagDeltasMax: 100_000, // /readyz fails past this backlog of unfolded delta rows: balances stay exact, but reads get slower
} as const;
