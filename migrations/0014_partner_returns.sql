-- ACH entries clearline refuses and must return to the partner that sent them (issue 13; docs/decisions/0025).
-- A row is written in the same transaction as the refusal; a cut (per partner, at a cut-off time)
-- gathers the pending rows into one NACHA return file, enqueued to the outbox in the same
-- transaction that stamps the rows with the cut's key. One row per returned entry: the refused
-- entry's natural key is the primary key, so a re-sent file cannot return an entry twice.
-- The row holds no account number or name: the cut reads them from the stored original file.
CREATE TABLE ach_return_entry (
  tenant_id     text        NOT NULL,
  natural_key   text        NOT NULL,   -- the refused entry's key
  partner_id    text        NOT NULL,
  file_id       text        NOT NULL,   -- the file the entry arrived in
  line          integer     NOT NULL CHECK (line >= 1),   -- its entry detail line in that file
  reason_code   char(3)     NOT NULL CHECK (reason_code ~ '^R[0-9]{2}$'),
  cut_key       text,                   -- the return file it went out in; NULL while pending
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, natural_key),
  FOREIGN KEY (tenant_id, file_id) REFERENCES ingest_file (tenant_id, file_id)
);
CREATE INDEX ach_return_entry_pending ON ach_return_entry (tenant_id, partner_id, created_at) WHERE cut_key IS NULL;

-- Every file clearline sends a partner (pacs.002 status reports, ACH return files), written in the
-- same transaction as the decision it tells about, under the key derived from that decision (the
-- outbox message's key: `<content hash>:status`, `<partner>:returns:<cut-off>`). Kept after
-- delivery: what was sent, byte for byte, is part of the record. The outbox row names the file by
-- its key; the deliverers read the bytes here.
CREATE TABLE partner_outbound_file (
  tenant_id     text        NOT NULL,
  partner_id    text        NOT NULL,
  file_key      text        NOT NULL,
  kind          text        NOT NULL CHECK (kind IN ('pacs.002', 'ach.return-file', 'file.rejection-report')),
  file_name     text        NOT NULL CHECK (file_name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$'),
  content       bytea       NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, partner_id, file_key)
);
