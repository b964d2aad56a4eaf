-- Versions of a record that a person already decided on (docs/decisions/0099). Both changes are
-- expands (docs/decisions/0083): a process of the release before writes no superseded version
-- (its replaces' superseded content is then held for a person, as it was) and leaves the new
-- count at its default.
--
-- The content a replace set aside: the key's content before the replace (a conflict), or the
-- matched record's (a suspect), with the posting it had, which the replace compensated. Written in
-- the decision's transaction; read by a probe of the primary key per repeat. Refused and
-- applied-as-new versions need no row: their review item is keyed by (key, content).
CREATE TABLE record_superseded (
  tenant_id       text        NOT NULL,
  natural_key     text        NOT NULL,
  fingerprint     text        NOT NULL,
  review_id       text        NOT NULL,   -- the decision that set this version aside
  superseded_ref  text        NOT NULL,   -- the posting this version had (compensated)
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, natural_key, fingerprint),
  FOREIGN KEY (tenant_id, review_id) REFERENCES review_decision (tenant_id, review_id)
);

-- A file's records that repeat a version already decided (counted among its duplicates too).
-- A constant default: no rewrite.
ALTER TABLE received_file ADD COLUMN repeats_decided integer NOT NULL DEFAULT 0;
