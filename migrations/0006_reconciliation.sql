-- Two-sided reconciliation (docs/decisions/0014-two-sided-reconciliation.md): the other side is
-- an independent source (a bank statement, a partner's file totals, a CSV), imported idempotently,
-- and compared with the ledger run by run, with a reason for every difference.

-- One imported external file. The same bytes imported again for the same account are recognised
-- by their hash and change nothing.
CREATE TABLE recon_import (
  tenant_id        text        NOT NULL,
  import_id        text        NOT NULL,   -- derived from account and content hash
  account_id       text        NOT NULL,
  format           text        NOT NULL CHECK (format IN ('camt053', 'camt054', 'ach', 'csv')),
  name             text        NOT NULL,
  content_sha256   text        NOT NULL,
  statement_ref    text,                   -- camt Stmt/Id or Ntfctn/Id, ACH file identity
  items            integer     NOT NULL CHECK (items >= 0),
  duplicates       integer     NOT NULL CHECK (duplicates >= 0),   -- items their side listed twice
  findings         jsonb       NOT NULL DEFAULT '[]',
  imported_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, import_id),
  UNIQUE (tenant_id, account_id, content_sha256),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);

-- One item of their side: a statement entry (with its parts when it is a batch), an ACH batch
-- total, a CSV row. item_key is its identity on their side (AcctSvcrRef, NtryRef, CSV id, ...),
-- so the same entry in a notification (camt.054) and then in the statement (camt.053) is one item;
-- an identity listed twice with other content is kept as a duplicate of the first.
CREATE TABLE recon_external_item (
  tenant_id      text        NOT NULL,
  account_id     text        NOT NULL,
  item_key       text        NOT NULL,
  import_id      text        NOT NULL,
  position       text        NOT NULL,   -- xmlPath, line
  booking_date   date        NOT NULL,
  value_date     date,
  direction      char(1)     NOT NULL CHECK (direction IN ('C', 'D')),   -- credit or debit of OUR account at them
  amount_minor   bigint      NOT NULL CHECK (amount_minor >= 0),
  currency       char(3)     NOT NULL,
  status         text        NOT NULL CHECK (status IN ('booked', 'pending')),
  refs           text[]      NOT NULL DEFAULT '{}',   -- references inside, tagged: "e2e:..", "uetr:..", "ref:.."
  parts          jsonb       NOT NULL DEFAULT '[]',   -- [{ amountMinor, refs }] of a batch entry
  description    text,
  duplicate_of   text,                   -- item_key of the first listing when their side listed it twice
  PRIMARY KEY (tenant_id, account_id, item_key),
  FOREIGN KEY (tenant_id, import_id) REFERENCES recon_import (tenant_id, import_id)
);
CREATE INDEX recon_external_item_date ON recon_external_item (tenant_id, account_id, booking_date);

-- One reconciliation of one account over one period. run_id is derived from the inputs (their
-- items, our transfers, the rules), so the same inputs give the same run; runs are kept.
CREATE TABLE recon_run (
  tenant_id      text        NOT NULL,
  run_id         text        NOT NULL,
  account_id     text        NOT NULL,
  period_from    date        NOT NULL,
  period_to      date        NOT NULL,
  rules_version  text        NOT NULL,
  matched        integer     NOT NULL,
  counts         jsonb       NOT NULL,   -- differences by reason
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);

-- Every outcome of a run: a match (with the rule that made it) or a difference (with its reason).
CREATE TABLE recon_result (
  tenant_id      text        NOT NULL,
  run_id         text        NOT NULL,
  seq            integer     NOT NULL,
  outcome        text        NOT NULL CHECK (outcome IN ('matched', 'theirs_only', 'ours_only', 'amount_differs',
                                                        'date_outside_window', 'duplicate_on_their_side', 'pending')),
  rule           text,                   -- the matching rule, for matches and near-matches
  item_keys      text[]      NOT NULL DEFAULT '{}',
  transfer_keys  text[]      NOT NULL DEFAULT '{}',
  theirs_minor   bigint      NOT NULL DEFAULT 0,   -- signed: credits positive
  ours_minor     bigint      NOT NULL DEFAULT 0,   -- signed the same way
  difference_id  text,                   -- for a difference: its stable id
  PRIMARY KEY (tenant_id, run_id, seq),
  FOREIGN KEY (tenant_id, run_id) REFERENCES recon_run (tenant_id, run_id)
);

-- A difference, identified by what it is about (reason + item or transfer), not by the run, so the
-- same difference seen again by a later run is the same row, and is corrected at most once.
CREATE TABLE recon_difference (
  tenant_id       text        NOT NULL,
  difference_id   text        NOT NULL,
  account_id      text        NOT NULL,
  reason          text        NOT NULL CHECK (reason IN ('theirs_only', 'ours_only', 'amount_differs',
                                                         'date_outside_window', 'duplicate_on_their_side')),
  first_run_id    text        NOT NULL,
  last_run_id     text        NOT NULL,
  item_keys       text[]      NOT NULL DEFAULT '{}',
  transfer_keys   text[]      NOT NULL DEFAULT '{}',
  delta_minor     bigint      NOT NULL,   -- theirs minus ours, signed as their side (credits positive)
  currency        char(3)     NOT NULL,
  state           text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'corrected', 'explained', 'resolved')),
  decided_by      text,
  decision_reason text,
  decided_at      timestamptz,
  correction_key  text,                   -- the correction transfer: recon:<difference_id>
  first_seen_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, difference_id),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);
CREATE INDEX recon_difference_open ON recon_difference (tenant_id, state, first_seen_at);
