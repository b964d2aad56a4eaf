// Codes of the record core (src/records): outcomes of records whatever channel carried them.
export const recordErrorCodes = {
  RECORD_SAME_PAYMENT: "The record carries the payment identity (end-to-end reference) of a record applied through another channel, with the same amount, currency and creditor: the same payment, recorded and linked to the first, never posted again.",
  RECORD_IDENTITY_CONFLICT: "The record carries the payment identity of a record that arrived through another channel with another amount, currency or creditor (or that was not applied): held for a person (a file) or refused (a request); nothing posted.",
  RECORD_ACCOUNT_UNKNOWN: "The record names a ledger account that does not exist: rejected before its key was claimed; nothing posted.",
  RECORD_ACCOUNT_CURRENCY_MISMATCH: "The record names a ledger account in another currency: rejected before its key was claimed; nothing posted.",
  RECORD_POSTED_FROM_SUSPENSE: "The record's debit account could not cover it and its posting rule applies such records as advised (an ISO 8583 advice): posted with the debit leg taken from the suspense account the record names, for a person to settle.",
  RECORD_NOTHING_TO_REVERSE: "A reversal of an original that moved no money (declined, approved without a hold, a balance inquiry) or whose actual amount equals the original's: applied and linked to the original; nothing posted.",
  RECORD_ORIGINAL_ALREADY_REVERSED: "A request that reverses an original another reversal already reversed (or is waiting for), with other content: refused to its sender (at most one reversal per original); nothing posted.",
  RECORD_REVERSAL_ABOVE_ORIGINAL: "A reversal that would undo more than its original posted, or in another currency: refused to its sender; nothing posted.",
  RECORD_ORIGINAL_UNKNOWN: "The record undoes part of an original it names by natural key, and no record has that key: rejected, its key left unclaimed; nothing posted.",
  RECORD_ORIGINAL_NOT_APPLIED: "The record undoes part of an original that was not applied (declined, held, refused) or posted nothing: rejected, its key left unclaimed; nothing posted.",
  RECORD_UNDO_CURRENCY_MISMATCH: "The record undoes part of an original in another currency: rejected, its key left unclaimed; nothing posted.",
  RECORD_UNDO_EXCEEDS_ORIGINAL: "The record would undo more of its original than remains (its amount less what earlier undos took): rejected, its key left unclaimed; nothing posted.",
  RECORD_NOT_FOUND: "No record of this tenant has this natural key (nor carries it as its payment identity).",
} as const satisfies Record<string, string>;
