-- Return deadlines (docs/decisions/0094-return-deadlines.md). Both changes are expands
-- (docs/decisions/0083): the processes of the release before never write the new values.
--
-- A late ACH return is held for a person as a review item of its own reason, late_return.
-- record_review is small (the held records only), so the check is replaced and validated in one
-- transaction.
ALTER TABLE record_review DROP CONSTRAINT record_review_reason_check;
ALTER TABLE record_review ADD CONSTRAINT record_review_reason_check
  CHECK (reason IN ('conflict', 'suspect', 'late_return')) NOT VALID;
ALTER TABLE record_review VALIDATE CONSTRAINT record_review_reason_check;

-- A return clearline would produce past its deadline is refused, not sent: the code
-- (RETURN_DEADLINE_PASSED) and the detail naming the deadline, kept on the pending return so that
-- no later cut takes it. Nullable, no default: no rewrite.
ALTER TABLE ach_return_entry ADD COLUMN refused_code text;
ALTER TABLE ach_return_entry ADD COLUMN refused_detail text;
