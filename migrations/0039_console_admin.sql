-- The console's admin pages (issue 33, docs/decisions/0106): an operator can be disabled (no
-- sign-in, no live session; the row and its decisions stay), and an access grant (a new
-- operator secret, a new webhook endpoint) waits for a second admin when the tenant has four
-- eyes on, as a proposal like a money decision's. Expands only (docs/decisions/0083): the release
-- before never reads the new columns and never writes the new kinds.
ALTER TABLE operator ADD COLUMN disabled_at timestamptz;
ALTER TABLE operator ADD COLUMN disabled_by text;
ALTER TABLE operator ADD COLUMN disabled_reason text;
ALTER TABLE operator ADD CONSTRAINT operator_disabled_said
  CHECK ((disabled_at IS NULL) = (disabled_by IS NULL AND disabled_reason IS NULL));

-- 'operator' (subject: the operator id; decision rotate_secret) and 'webhook_endpoint' (subject:
-- the URL; decision add, its event types in detail). Neither moves money: amount 0, currency XXX
-- (ISO 4217: no currency).
ALTER TABLE decision_proposal DROP CONSTRAINT decision_proposal_subject_kind_check;
ALTER TABLE decision_proposal ADD CONSTRAINT decision_proposal_subject_kind_check
  CHECK (subject_kind IN ('review', 'suspense_move', 'recon_difference', 'operator',
                          'webhook_endpoint'));
ALTER TABLE decision_proposal ADD COLUMN detail jsonb;
