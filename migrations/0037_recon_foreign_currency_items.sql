-- clearline:no-transaction
-- Statement entries in another currency than their account (docs/decisions/0104). Expands only
-- (docs/decisions/0083): the release before never writes the new column or the new reason.
--
-- recon_result grows with every run, so its check is replaced NOT VALID in a short transaction
-- and validated after it, under a lock that lets runs go on.

-- What a foreign-currency entry's statement says besides its amount: the amounts of its AmtDtls,
-- the exchange, and the amount in the account's currency when one is. NULL for every other item.
-- Nullable, no default: no rewrite.
ALTER TABLE recon_external_item ADD COLUMN IF NOT EXISTS foreign_detail jsonb;

BEGIN;
ALTER TABLE recon_difference DROP CONSTRAINT IF EXISTS recon_difference_reason_check;
ALTER TABLE recon_difference ADD CONSTRAINT recon_difference_reason_check
  CHECK (reason IN ('theirs_only', 'ours_only', 'amount_differs', 'date_outside_window',
                    'duplicate_on_their_side', 'foreign_currency')) NOT VALID;
ALTER TABLE recon_result DROP CONSTRAINT IF EXISTS recon_result_outcome_check;
ALTER TABLE recon_result ADD CONSTRAINT recon_result_outcome_check
  CHECK (outcome IN ('matched', 'theirs_only', 'ours_only', 'amount_differs',
                     'date_outside_window', 'duplicate_on_their_side', 'pending',
                     'foreign_currency')) NOT VALID;
COMMIT;

ALTER TABLE recon_difference VALIDATE CONSTRAINT recon_difference_reason_check;
ALTER TABLE recon_result VALIDATE CONSTRAINT recon_result_outcome_check;
