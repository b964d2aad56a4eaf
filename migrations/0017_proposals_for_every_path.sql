-- Four eyes on every path (docs/decisions/0035): reconciliation corrections are proposed like
-- review decisions, a proposal records the path it came by (the console, the tenant's API key or
-- the CLI, each naming an operator as proposer), and an open proposal can be cancelled, with a
-- reason, by its proposer or another approver. A cancelled proposal moved no money and is never
-- reopened; the subject can be proposed again.
ALTER TABLE decision_proposal DROP CONSTRAINT decision_proposal_subject_kind_check;
ALTER TABLE decision_proposal ADD CONSTRAINT decision_proposal_subject_kind_check
  CHECK (subject_kind IN ('review', 'suspense_move', 'recon_difference'));

ALTER TABLE decision_proposal ADD COLUMN proposed_via text NOT NULL DEFAULT 'console'
  CHECK (proposed_via IN ('console', 'api_key', 'cli'));
ALTER TABLE decision_proposal ADD COLUMN cancelled_by text REFERENCES operator (operator_id);
ALTER TABLE decision_proposal ADD COLUMN cancelled_at timestamptz;
ALTER TABLE decision_proposal ADD COLUMN cancel_reason text;

-- 'rejected' was never written; 'cancelled' takes its place. Each state says which columns it sets.
ALTER TABLE decision_proposal DROP CONSTRAINT decision_proposal_state_check;
ALTER TABLE decision_proposal DROP CONSTRAINT decision_proposal_check1;
ALTER TABLE decision_proposal ADD CONSTRAINT decision_proposal_state_check CHECK (state IN ('open', 'approved', 'cancelled'));
ALTER TABLE decision_proposal ADD CONSTRAINT decision_proposal_approved_state
  CHECK ((state = 'approved') = (approved_by IS NOT NULL AND approved_at IS NOT NULL));
ALTER TABLE decision_proposal ADD CONSTRAINT decision_proposal_cancelled_state
  CHECK ((state = 'cancelled') = (cancelled_by IS NOT NULL AND cancelled_at IS NOT NULL AND cancel_reason IS NOT NULL));
