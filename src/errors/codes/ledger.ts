export const ledgerErrorCodes = {
  LEDGER_TRANSFER_EMPTY: "A transfer must have at least two legs.",
  LEDGER_TRANSFER_UNBALANCED: "The debits and credits of a transfer differ in some currency.",
  LEDGER_ACCOUNT_UNKNOWN: "A leg names an account that does not exist for this tenant.",
  LEDGER_ACCOUNT_CURRENCY_MISMATCH: "A leg's currency differs from its account's currency.",
  LEDGER_ACCOUNT_EXISTS_DIFFERENT: "An account with this id exists with another kind or currency.",
  LEDGER_INSUFFICIENT_FUNDS: "The posting would take a customer account below zero.",
  LEDGER_PROJECTION_MISMATCH: "A materialized balance disagrees with the sum of its entries.",
  LEDGER_TRANSFER_UNBALANCED_STORED: "A stored transfer's entries do not balance.",
  LEDGER_NEGATIVE_CUSTOMER_BALANCE: "A customer account's balance derived from its entries is below zero.",
  LEDGER_CHECKPOINT_MISMATCH: "A verification checkpoint's sums or totals disagree with "
    + "the entries visible to it (an old entry changed or added, or the checkpoint changed).",
  LEDGER_AVAILABLE_RULE_UNKNOWN: "An account's available rule is one of booked or settled-credits "
    + "(docs/decisions/0102).",
  LEDGER_BALANCE_KIND_UNKNOWN: "A balance on a date is booked, settled or available "
    + "(docs/decisions/0102).",
  LEDGER_STATEMENT_TOO_LARGE: "An account's end-of-day statement would hold more entries than "
    + "limits.ledger.dayStatementEntriesMax; a statement in pages is not written.",
  LEDGER_SETTLEMENT_NET_MISMATCH: "The net per transfer kept for a settlement account (what reconciliation reads) disagrees with its entries.",
} as const satisfies Record<string, string>;
