-- One record core for every channel (docs/decisions/0032-record-core.md). A record's dedup mark is
-- a row of ingest_record_key whatever carried it: a file's line, an HTTP request. A record that
-- did not arrive in a file has no file and no index; its position names the request.
ALTER TABLE ingest_record_key ALTER COLUMN file_id DROP NOT NULL;
ALTER TABLE ingest_record_key ALTER COLUMN record_index DROP NOT NULL;
ALTER TABLE ingest_record_key ADD CONSTRAINT ingest_record_key_arrival_check
  CHECK ((file_id IS NULL) = (record_index IS NULL));

-- The payment identity a record carries across channels (protocols/records/cross-channel-keys.json),
-- e.g. 'e2e:<end-to-end reference>'. Kept on every key that has one, so a record's history finds
-- the arrivals of the same payment through other channels.
ALTER TABLE ingest_record_key ADD COLUMN identity_key text;
CREATE INDEX ingest_record_key_identity ON ingest_record_key (tenant_id, identity_key) WHERE identity_key IS NOT NULL;

-- The first record of each payment identity: the primary key arbitrates between channels (an HTTP
-- request and a file chunk claiming one identity at once), never a check before the insert.
CREATE TABLE record_identity (
  tenant_id     text        NOT NULL,
  identity_key  text        NOT NULL,
  natural_key   text        NOT NULL,   -- the record that claimed it first
  channel       text        NOT NULL,
  fingerprint   text        NOT NULL,   -- of what makes two arrivals one payment: amount, currency, creditor
  transfer_key  text,                   -- the first record's posting, when its rule posts
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, identity_key)
);

-- Suspects are records equal in content to a record applied from ANOTHER FILE: only file arrivals
-- are ever looked up by fingerprint, so a request's mark does not pay for that index.
DROP INDEX ingest_record_key_fingerprint;
CREATE INDEX ingest_record_key_fingerprint ON ingest_record_key (tenant_id, fingerprint) WHERE file_id IS NOT NULL;
