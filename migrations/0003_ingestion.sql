-- The ingestion pipeline (issue 6): clearing partners, account aliases, file receipts with their
-- content, the per-record dedup mark (one row per natural key per tenant, no expiry), one outcome
-- row per record of every file, and the review queue for conflicts and suspects.
-- Every table leads its primary key with tenant_id (docs/decisions/0003, ARCHITECTURE.md).

-- A clearing partner: who sends files, and the accounts its records post against. Settlement and
-- suspense accounts are per currency: `<partner_id>.settlement.<CCY>`, `<partner_id>.suspense.<CCY>`.
CREATE TABLE partner (
  tenant_id     text        NOT NULL,
  partner_id    text        NOT NULL,
  name          text        NOT NULL,
  currency      char(3)     NOT NULL,   -- the currency whose accounts `partner add` opens
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, partner_id),
  UNIQUE (tenant_id, name)
);

-- How a counterparty named in a file (routing + account number, IBAN, other id) maps to a ledger
-- account. An alias that resolves nowhere sends the record's leg to the partner's suspense account.
CREATE TABLE account_alias (
  tenant_id   text        NOT NULL,
  alias       text        NOT NULL,   -- "aba:<routing 9>:<account>", "iban:<IBAN>", "acct:<id>"
  account_id  text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, alias),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);

-- Every file that arrived, stored before anything is parsed.
CREATE TABLE ingest_file (
  tenant_id        text        NOT NULL,
  file_id          text        NOT NULL,
  partner_id       text        NOT NULL,
  source           text        NOT NULL CHECK (source IN ('drop_folder', 'sftp', 'http', 'cli')),
  original_name    text        NOT NULL,
  size_bytes       bigint      NOT NULL CHECK (size_bytes >= 0),
  bytes_sha256     text        NOT NULL,   -- of the bytes as received
  content_hash     text,                   -- of the normalized content (identity, keys, fingerprints); set when read
  format           text        CHECK (format IN ('ach', 'iso20022')),
  identity_key     text,                   -- ACH header identity; ISO 20022 message type + MsgId + sender
  correction_of    text,                   -- an earlier file with this identity and other content
  status           text        NOT NULL CHECK (status IN ('received', 'processing', 'done', 'rejected')),
  records_total    integer,                -- records in the file, known after the validation pass
  records_done     integer     NOT NULL DEFAULT 0 CHECK (records_done >= 0),   -- progress: records committed
  applied          integer     NOT NULL DEFAULT 0,
  duplicate        integer     NOT NULL DEFAULT 0,
  conflict         integer     NOT NULL DEFAULT 0,
  suspect          integer     NOT NULL DEFAULT 0,
  rejected         integer     NOT NULL DEFAULT 0,
  orphan           integer     NOT NULL DEFAULT 0,
  findings         jsonb       NOT NULL DEFAULT '[]',   -- file-scope errors and warnings, bounded
  received_at      timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),   -- heartbeat: a stale `processing` file is resumed
  finished_at      timestamptz,
  PRIMARY KEY (tenant_id, file_id),
  FOREIGN KEY (tenant_id, partner_id) REFERENCES partner (tenant_id, partner_id)
);
CREATE INDEX ingest_file_unfinished ON ingest_file (updated_at) WHERE status IN ('received', 'processing');
CREATE INDEX ingest_file_identity ON ingest_file (tenant_id, identity_key);
CREATE INDEX ingest_file_received ON ingest_file (tenant_id, received_at);

-- The content, in bounded pieces, so that a large file is stored and read back in bounded memory.
CREATE TABLE ingest_file_content (
  tenant_id  text    NOT NULL,
  file_id    text    NOT NULL,
  seq        integer NOT NULL CHECK (seq >= 0),
  bytes      bytea   NOT NULL,
  PRIMARY KEY (tenant_id, file_id, seq),
  FOREIGN KEY (tenant_id, file_id) REFERENCES ingest_file (tenant_id, file_id)
);
-- Clearing files are already text; compressing every piece costs more CPU than the disk it saves.
ALTER TABLE ingest_file_content ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- The dedup mark: one row per natural key per tenant, for ever (no expiry, no time partition).
-- Inserted with ON CONFLICT DO NOTHING in the same transaction as the record's posting.
CREATE TABLE ingest_record_key (
  tenant_id     text        NOT NULL,
  natural_key   text        NOT NULL,
  fingerprint   text        NOT NULL,
  channel       text        NOT NULL,
  kind          text        NOT NULL,
  state         text        NOT NULL CHECK (state IN ('applied', 'held', 'orphan', 'rejected', 'refused')),
  file_id       text        NOT NULL,   -- where the key was first seen
  record_index  integer     NOT NULL,
  position      text        NOT NULL,
  amount_minor  bigint      NOT NULL,
  currency      char(3)     NOT NULL,
  value_date    date        NOT NULL,
  transfer_key  text,                   -- the posting, when there is one
  -- Ids a return may name to find this record, tagged by kind so that they never collide:
  -- ACH "ach-link:<trace>:<RDFI>" and "ach-trace:<trace>"; ISO 20022 "uetr:..." and "e2e:...".
  link_id1      text,
  link_id2      text,
  original_ref  text,                   -- for a return: the natural key or link id of its original
  original_id1  text,                   -- for a return: fallback ids of its original (the RDFI in an
  original_id2  text,                   --   ACH return can be wrong; an operator's key can name itself)
  matched_key   text,                   -- for a return: the natural key of the original it reversed
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, natural_key)
);
CREATE INDEX ingest_record_key_fingerprint ON ingest_record_key (tenant_id, fingerprint);
CREATE INDEX ingest_record_key_link1 ON ingest_record_key (tenant_id, link_id1) WHERE link_id1 IS NOT NULL;
CREATE INDEX ingest_record_key_link2 ON ingest_record_key (tenant_id, link_id2) WHERE link_id2 IS NOT NULL;
-- Orphans wait for their original: small partial indexes, probed by every chunk that applies records.
CREATE INDEX ingest_record_key_orphan_ref ON ingest_record_key (tenant_id, original_ref) WHERE state = 'orphan';
CREATE INDEX ingest_record_key_orphan_id1 ON ingest_record_key (tenant_id, original_id1) WHERE state = 'orphan';
CREATE INDEX ingest_record_key_orphan_id2 ON ingest_record_key (tenant_id, original_id2) WHERE state = 'orphan';
CREATE INDEX ingest_record_key_matched ON ingest_record_key (tenant_id, matched_key) WHERE matched_key IS NOT NULL;

-- One row per record of every file: what happened to it and why. This is the dedup record the
-- design asks for: key, time, channel, source position, outcome and the original effect.
CREATE TABLE ingest_outcome (
  tenant_id     text        NOT NULL,
  file_id       text        NOT NULL,
  record_index  integer     NOT NULL CHECK (record_index >= 1),   -- 1-based order in the file
  position      text        NOT NULL,   -- "line 12" or an xmlPath
  natural_key   text,                   -- absent when the record was rejected before it had one
  outcome       text        NOT NULL CHECK (outcome IN ('applied', 'duplicate', 'conflict', 'suspect', 'rejected', 'orphan')),
  code          text,                   -- why: an error code, or the dedup reason
  field         text,                   -- the field a rejection is about
  detail        text,
  kind          text,
  amount_minor  bigint,
  currency      char(3),
  original_ref  text,                   -- the original effect: transfer key, or file and position
  transfer_key  text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, file_id, record_index),
  FOREIGN KEY (tenant_id, file_id) REFERENCES ingest_file (tenant_id, file_id)
);
CREATE INDEX ingest_outcome_key ON ingest_outcome (tenant_id, natural_key);

-- Conflicts and suspects wait here for a person. One item per (key, content): the same changed
-- record uploaded twice is one item. The decision is recorded with its reason and never erased.
CREATE TABLE ingest_review (
  tenant_id     text        NOT NULL,
  review_id     text        NOT NULL,   -- derived from natural key and fingerprint
  reason        text        NOT NULL CHECK (reason IN ('conflict', 'suspect')),
  natural_key   text        NOT NULL,
  fingerprint   text        NOT NULL,
  file_id       text        NOT NULL,
  record_index  integer     NOT NULL,
  partner_id    text        NOT NULL,
  record        jsonb       NOT NULL,   -- the canonical record and its counterparty, to post on release
  matched_ref   text,                   -- what it collided with: the applied record's key or transfer
  state         text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'released', 'refused')),
  decision_reason text,
  decided_at    timestamptz,
  transfer_key  text,                   -- the posting made on release
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, review_id),
  CHECK (state = 'open' OR (decision_reason IS NOT NULL AND decided_at IS NOT NULL))
);
CREATE INDEX ingest_review_open ON ingest_review (tenant_id, created_at) WHERE state = 'open';
