-- Operators of the operations console and API (issue 14, docs/decisions/0026): people with a
-- role in one tenant, their sessions, the per-tenant four-eyes amount and the proposals that wait
-- for a second approver.

CREATE TABLE operator (
  operator_id  text        NOT NULL PRIMARY KEY,
  tenant_id    text        NOT NULL REFERENCES tenant (tenant_id),
  name         text        NOT NULL,
  role         text        NOT NULL CHECK (role IN ('viewer', 'approver', 'admin')),
  secret_hash  text        NOT NULL,   -- scrypt$N$r$p$salt$key; the secret itself is shown once
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);

-- A signed-in browser. The cookie carries a random token; only its sha256 is stored, so a leaked
-- table does not leak working sessions. The CSRF token is per session (synchronizer token).
CREATE TABLE operator_session (
  session_hash text        NOT NULL PRIMARY KEY,
  operator_id  text        NOT NULL REFERENCES operator (operator_id),
  csrf_token   text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_session_expiry ON operator_session (expires_at);

-- Decisions on amounts above this need a second approver (four eyes). No row: no four eyes.
CREATE TABLE tenant_four_eyes (
  tenant_id          text        NOT NULL PRIMARY KEY REFERENCES tenant (tenant_id),
  above_amount_minor bigint      NOT NULL CHECK (above_amount_minor >= 0),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- A decision proposed by one operator, waiting for another. The database, not a check in code,
-- keeps the proposer from approving it and keeps one open proposal per subject.
CREATE TABLE decision_proposal (
  tenant_id      text        NOT NULL REFERENCES tenant (tenant_id),
  proposal_id    text        NOT NULL,
  subject_kind   text        NOT NULL CHECK (subject_kind IN ('review', 'suspense_move')),
  subject_id     text        NOT NULL,   -- review id, or the suspense posting's transfer key
  decision       text        NOT NULL,   -- replace | apply_as_new | refuse | move
  target_account text,                   -- a suspense move's destination
  reason         text        NOT NULL,
  amount_minor   bigint      NOT NULL,
  currency       char(3)     NOT NULL,
  proposed_by    text        NOT NULL REFERENCES operator (operator_id),
  proposed_at    timestamptz NOT NULL DEFAULT now(),
  state          text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'approved', 'rejected')),
  approved_by    text        REFERENCES operator (operator_id),
  approved_at    timestamptz,
  PRIMARY KEY (tenant_id, proposal_id),
  CHECK (approved_by IS NULL OR approved_by <> proposed_by),
  CHECK ((state = 'open') = (approved_by IS NULL))
);
CREATE UNIQUE INDEX decision_proposal_one_open ON decision_proposal (tenant_id, subject_kind, subject_id) WHERE state = 'open';

-- Money moved out of suspense by an operator: one move per suspense posting, for ever (the primary
-- key, and the move's transfer key <posting key>:suspense-move, arbitrate).
CREATE TABLE suspense_move (
  tenant_id      text        NOT NULL REFERENCES tenant (tenant_id),
  posting_key    text        NOT NULL,   -- the transfer that credited or debited suspense
  move_key       text        NOT NULL,   -- <posting_key>:suspense-move
  target_account text        NOT NULL,
  amount_minor   bigint      NOT NULL CHECK (amount_minor > 0),
  currency       char(3)     NOT NULL,
  reason         text        NOT NULL,
  decided_by     text        NOT NULL,   -- operator name, or "<proposer> approved by <approver>"
  decided_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, posting_key)
);
