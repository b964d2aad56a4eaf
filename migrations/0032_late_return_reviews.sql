-- A late ACH return is held for a person as a review item of its own reason, late_return
-- (docs/decisions/0094-return-deadlines.md). An expand (docs/decisions/0083): the check only
-- admits one more value; the processes of the release before never write it. record_review is
-- small (the held records only), so the check is replaced and validated in one transaction.
ALTER TABLE record_review DROP CONSTRAINT record_review_reason_check;
ALTER TABLE record_review ADD CONSTRAINT record_review_reason_check
  CHECK (reason IN ('conflict', 'suspect', 'late_return')) NOT VALID;
ALTER TABLE record_review VALIDATE CONSTRAINT record_review_reason_check;
