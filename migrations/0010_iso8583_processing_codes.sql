-- Processing codes and partial reversals (docs/decisions/0028).
-- An original may now be approved without an effect (a refund authorization) or answered (a balance
-- inquiry, field 54); neither moves money.
ALTER TABLE iso8583_inbound DROP CONSTRAINT iso8583_inbound_outcome_check;
ALTER TABLE iso8583_inbound ADD CONSTRAINT iso8583_inbound_outcome_check
  CHECK (outcome IN ('held', 'posted', 'posted_to_suspense', 'declined', 'refused_after_reversal', 'approved', 'answered'));

-- A reversal of a refund the customer already spent takes the customer's side from suspense.
ALTER TABLE iso8583_inbound_reversal DROP CONSTRAINT iso8583_inbound_reversal_outcome_check;
ALTER TABLE iso8583_inbound_reversal ADD CONSTRAINT iso8583_inbound_reversal_outcome_check
  CHECK (outcome IN ('released', 'reversed', 'reversed_to_suspense', 'nothing_to_reverse', 'orphan'));

-- Field 95's actual amount (NULL: a full reversal) and what the reversal undid (0 when nothing).
-- Rows written before this migration are full reversals; their undone amount is not restated.
ALTER TABLE iso8583_inbound_reversal ADD COLUMN actual_minor bigint CHECK (actual_minor > 0);
ALTER TABLE iso8583_inbound_reversal ADD COLUMN undone_minor bigint CHECK (undone_minor >= 0);
