export const reconErrorCodes = {
  RECON_FORMAT_UNKNOWN: "The file is not a statement format reconciliation reads (camt.053, camt.054, ACH, CSV).",
  RECON_XML_MALFORMED: "The statement is not well-formed XML.",
  RECON_STATEMENT_NOT_CAMT: "The XML document is not a camt.053 statement or camt.054 notification.",
  RECON_ENTRY_FIELD_MISSING: "A statement entry or CSV row lacks a field reconciliation needs (amount, currency, direction, date).",
  RECON_ENTRY_FIELD_INVALID: "A statement entry or CSV row has a field reconciliation cannot read (amount, date, direction).",
  RECON_ENTRIES_TOO_MANY: "The file has more entries than one import takes.",
  RECON_PARTS_TOO_MANY: "A batch entry has more parts than one item keeps.",
  RECON_BALANCE_MISMATCH: "The statement's closing balance is not its opening balance plus its booked entries.",
  RECON_CURRENCY_MISMATCH: "The statement is of an account in another currency than the reconciled one.",
  RECON_ITEM_FOREIGN_CURRENCY:
    "A statement entry in another currency than its account: kept for a person (decision 0104).",
  RECON_ACCOUNT_NOT_RECONCILABLE: "Only settlement accounts (our money held at a bank or partner) are reconciled.",
  RECON_RUN_LEFTOVERS_TOO_MANY: "A run's pairing by reference left more items and transfers unpaired than the in-memory matcher takes; nothing was stored. Check the account and the imports, or split the period.",
  RECON_FILE_CHANGED: "The file changed while it was imported (its bytes differ between hashing and reading); nothing was stored. Import it again.",
  RECON_RUN_TOO_LARGE: "A run over this period would hold more items than one run takes; split the period.",
  RECON_PERIOD_INVALID: "The period's dates are not YYYY-MM-DD, or from is after to.",
  RECON_DIFFERENCE_UNKNOWN: "No difference with this id exists for the tenant.",
  RECON_DIFFERENCE_DECIDED: "The difference was already corrected or explained; the first decision stands.",
  RECON_DIFFERENCE_NOT_CORRECTABLE: "This kind of difference moves no money (a date outside the window): explain it instead.",
  RECON_DIFFERENCE_DECISION_MISSING:
    "A difference's decision names correct (post it) or explain (no money), chosen by the person "
      + "deciding: none is assumed (the console preselects none). Nothing was decided.",
  RECON_RUN_UNKNOWN: "No reconciliation run with this id exists for the tenant.",
} as const satisfies Record<string, string>;
