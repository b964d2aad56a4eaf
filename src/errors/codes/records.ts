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
  // Each record's outcome codes, and the review of held records.
  RECORD_NO_POSTING_RULE:
    "No posting rule covers this record's channel and kind; the record is rejected, never guessed.",
  RECORD_INSUFFICIENT_FUNDS:
    "An incoming debit would take the customer's account below zero: refused, to be returned "
      + "(R01); nothing posted.",
  RECORD_COUNTERPARTY_UNRESOLVED:
    "The counterparty account matches no alias: the leg was posted to the partner's suspense "
      + "account and listed for operations.",
  RECORD_DUPLICATE:
    "The record's natural key was applied before with the same content: not applied again.",
  RECORD_VERSION_DECIDED:
    "The record repeats a version of its natural key that a person already decided on (content "
      + "a replace set aside, or held content refused or applied as new): a duplicate of that "
      + "arrival, naming the decision; nothing posted, no review item (docs/decisions/0099).",
  RECORD_CONFLICT:
    "The record's natural key was seen before with other content: quarantined for review, never "
      + "applied.",
  RECORD_SUSPECT:
    "A new key whose content equals a record applied from another file within the window: held "
      + "for review.",
  RECORD_RETURN_LATE:
    "An ACH return dated after NACHA's deadline for its reason code (two banking days, sixty "
      + "calendar days for the extended codes; docs/decisions/0094): held for a person as a "
      + "late_return review naming the deadline it missed; nothing posted until accepted.",
  RECORD_RETURN_LINK_WARNING:
    "Warning on an applied return: linked to its forward by original trace and amount although "
      + "its Original DFI or its transaction code disagrees; the detail says which.",
  RECORD_KEY_REUSED_IN_FILE:
    "Two records of one file have the same natural key (the originator reused a trace across "
      + "batches): both held for review, neither applied nor counted a duplicate; the file carries "
      + "a warning naming them.",
  RECORD_PAYMENT_LEG_LINKED:
    "A later leg of one payment (same UETR, EndToEndId, amount and currency; other agents): "
      + "recorded and linked to the first leg, which alone is posted.",
  RECORD_UETR_REUSED:
    "A new record carries a UETR that already names another payment (other EndToEndId, amount "
      + "or currency): held for review; the detail names both records.",
  RECORD_ORPHAN:
    "A return whose original is unknown: recorded, and matched when the original arrives.",
  RECORD_RETURN_AMOUNT_MISMATCH:
    "A return names an original whose amount differs: the link is not confirmed and the return "
      + "waits as an orphan.",
  REVIEW_NOT_FOUND:
    "No review item has this id for this tenant.",
  REVIEW_DECIDED:
    "The review item was already decided (replaced, applied as new, refused, or released before "
      + "release went away); a decision is never changed, and the first one is named.",
  REVIEW_RELEASE_REMOVED:
    "`review release` is gone: decide a held record with replace (it corrects the original), "
      + "apply-as-new (a separate payment) or refuse (nothing posted).",
  REVIEW_REASON_MISSING:
    "A review decision needs a reason (and, over HTTP, an operator): it is kept with the decision.",
  REVIEW_DECISION_MISSING:
    "A review decision names what to do, replace, apply_as_new or refuse, chosen by the person "
      + "deciding: none is assumed (the console preselects none). Nothing was decided.",
  REVIEW_INSUFFICIENT_FUNDS:
    "A posting of the decision would take a customer account below zero (e.g. compensating a "
      + "credit already spent): nothing was posted and the review stays open.",
  REVIEW_NOT_APPLICABLE:
    "Replace has no meaning for this item (the original has no posting, was returned or "
      + "compensated already, or the held record is a return): nothing was posted; apply-as-new or "
      + "refuse remain.",
} as const satisfies Record<string, string>;
