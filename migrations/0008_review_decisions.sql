-- Review decisions and compensations (docs/decisions/0011). A held record is decided with
-- replace (compensate the original, post the corrected record), apply_as_new (post it as a
-- separate payment) or refuse (post nothing); `review release` is gone. Rows released before
-- this migration keep their state.

ALTER TABLE ingest_review DROP CONSTRAINT ingest_review_state_check;
ALTER TABLE ingest_review ADD CONSTRAINT ingest_review_state_check
  CHECK (state IN ('open', 'released', 'replaced', 'applied_as_new', 'refused'));

-- `replaced`: the key's record was replaced by a suspect's (its posting compensated); no return
-- is matched against it any more.
ALTER TABLE ingest_record_key DROP CONSTRAINT ingest_record_key_state_check;
ALTER TABLE ingest_record_key ADD CONSTRAINT ingest_record_key_state_check
  CHECK (state IN ('applied', 'held', 'orphan', 'rejected', 'refused', 'replaced'));

-- One decision per review, for ever: the primary key arbitrates, not a check before the insert.
CREATE TABLE review_decision (
  tenant_id              text        NOT NULL,
  review_id              text        NOT NULL,
  decision               text        NOT NULL CHECK (decision IN ('replace', 'apply_as_new', 'refuse')),
  reason                 text        NOT NULL CHECK (length(reason) > 0),
  operator               text        NOT NULL CHECK (length(operator) > 0),
  original_transfer_key  text,        -- replace: the posting it compensated
  compensation_key       text,        -- replace: '<original_transfer_key>:compensate'
  posting_key            text,        -- replace: the corrected posting; apply_as_new: the new payment
  decided_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, review_id),
  FOREIGN KEY (tenant_id, review_id) REFERENCES ingest_review (tenant_id, review_id)
);

-- Every compensation, keyed and linked: the transfer it reverses (at most once), the posting
-- that takes its place, why, and what decided it. Written in the compensation's transaction.
CREATE TABLE compensation (
  tenant_id         text        NOT NULL,
  compensation_key  text        NOT NULL,   -- '<compensated_key>:compensate'
  compensated_key   text        NOT NULL,
  corrected_key     text,                   -- the posting that takes the compensated one's place
  reason            text        NOT NULL,   -- review_replace; incident tooling adds its own
  decided_by        text        NOT NULL,   -- 'review:<review id>'
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, compensation_key),
  UNIQUE (tenant_id, compensated_key),
  FOREIGN KEY (tenant_id, compensation_key) REFERENCES transfer (tenant_id, transfer_key),
  FOREIGN KEY (tenant_id, compensated_key) REFERENCES transfer (tenant_id, transfer_key),
  FOREIGN KEY (tenant_id, corrected_key) REFERENCES transfer (tenant_id, transfer_key)
);
