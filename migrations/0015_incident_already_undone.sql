-- Incident compensation undoes only what is still in effect (docs/decisions/0015, items 5-8):
-- a record already wholly undone by a reversal, return or refund is compensated by nothing, and a
-- return (it undoes an original, whose compensation it already lowered) is not compensated on its own.
ALTER TABLE incident_compensation DROP CONSTRAINT incident_compensation_outcome_check;
ALTER TABLE incident_compensation ADD CONSTRAINT incident_compensation_outcome_check
  CHECK (outcome IN ('posted', 'already_compensated', 'already_undone', 'undoes_original', 'refused'));
-- What reversals, returns or refunds had undone when the compensation was decided (NULL before 0015).
ALTER TABLE incident_compensation ADD COLUMN undone_minor bigint CHECK (undone_minor >= 0);
