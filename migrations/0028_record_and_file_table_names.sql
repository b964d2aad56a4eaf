-- clearline:accepts-checksum bb5424e6720749a3fbbb62caf5125dee8b1cab0b49a62280b1bc41008dd2463c
-- Names for what the tables hold (docs/decisions/0068). The record tables serve every channel
-- (files, HTTP, ISO 8583), not file ingestion: ingest_record_key is each natural key's dedup mark
-- (record_key), ingest_outcome each file record's outcome (record_outcome), ingest_review each
-- held record waiting for a person (record_review). ingest_file and its content are the files
-- received (received_file, received_file_content). Renames only: no row is rewritten, so the
-- migration takes its locks for an instant whatever the tables hold. Indexes and constraints
-- follow their tables' names; renaming a primary key's constraint renames its index.
--
-- Expand, then contract (docs/decisions/0083): a process of the release before this one still
-- names the old tables, and a fleet is upgraded one process at a time. So each old name stays, in
-- the rename's transaction, as a view of the renamed table: a plain view of one table, which
-- PostgreSQL writes through (INSERT ... ON CONFLICT, UPDATE, DELETE, FOR UPDATE; the table's
-- triggers and constraints hold). This file's first text renamed without them (the checksum
-- above); migration 0030 makes the same views where that text ran. The release after the one
-- that made them drops them, when no process of the old names can still be serving.

ALTER TABLE ingest_record_key RENAME TO record_key;
ALTER TABLE record_key RENAME CONSTRAINT ingest_record_key_pkey TO record_key_pkey;
ALTER TABLE record_key RENAME CONSTRAINT ingest_record_key_arrival_check
  TO record_key_arrival_check;
ALTER TABLE record_key RENAME CONSTRAINT ingest_record_key_state_check TO record_key_state_check;
ALTER TABLE record_key RENAME CONSTRAINT ingest_record_key_undone_check TO record_key_undone_check;
ALTER INDEX ingest_record_key_fingerprint RENAME TO record_key_fingerprint;
ALTER INDEX ingest_record_key_identity RENAME TO record_key_identity;
ALTER INDEX ingest_record_key_link1 RENAME TO record_key_link1;
ALTER INDEX ingest_record_key_link2 RENAME TO record_key_link2;
ALTER INDEX ingest_record_key_matched RENAME TO record_key_matched;
ALTER INDEX ingest_record_key_orphan_id1 RENAME TO record_key_orphan_id1;
ALTER INDEX ingest_record_key_orphan_id2 RENAME TO record_key_orphan_id2;
ALTER INDEX ingest_record_key_orphan_ref RENAME TO record_key_orphan_ref;
ALTER INDEX ingest_record_key_transfer RENAME TO record_key_transfer;

ALTER TABLE ingest_outcome RENAME TO record_outcome;
ALTER TABLE record_outcome RENAME CONSTRAINT ingest_outcome_pkey TO record_outcome_pkey;
ALTER TABLE record_outcome RENAME CONSTRAINT ingest_outcome_outcome_check
  TO record_outcome_outcome_check;
ALTER TABLE record_outcome RENAME CONSTRAINT ingest_outcome_record_index_check
  TO record_outcome_record_index_check;
ALTER TABLE record_outcome RENAME CONSTRAINT ingest_outcome_tenant_id_file_id_fkey
  TO record_outcome_tenant_id_file_id_fkey;
ALTER INDEX ingest_outcome_key RENAME TO record_outcome_key;

ALTER TABLE ingest_review RENAME TO record_review;
ALTER TABLE record_review RENAME CONSTRAINT ingest_review_pkey TO record_review_pkey;
ALTER TABLE record_review RENAME CONSTRAINT ingest_review_check TO record_review_check;
ALTER TABLE record_review RENAME CONSTRAINT ingest_review_reason_check
  TO record_review_reason_check;
ALTER TABLE record_review RENAME CONSTRAINT ingest_review_state_check TO record_review_state_check;
ALTER INDEX ingest_review_open RENAME TO record_review_open;

ALTER TABLE ingest_file RENAME TO received_file;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_pkey TO received_file_pkey;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_format_check TO received_file_format_check;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_records_done_check
  TO received_file_records_done_check;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_size_bytes_check
  TO received_file_size_bytes_check;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_source_check TO received_file_source_check;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_status_check TO received_file_status_check;
ALTER TABLE received_file RENAME CONSTRAINT ingest_file_tenant_id_partner_id_fkey
  TO received_file_tenant_id_partner_id_fkey;
ALTER INDEX ingest_file_bytes RENAME TO received_file_bytes;
ALTER INDEX ingest_file_identity RENAME TO received_file_identity;
ALTER INDEX ingest_file_received RENAME TO received_file_received;
ALTER INDEX ingest_file_unfinished RENAME TO received_file_unfinished;

ALTER TABLE ingest_file_content RENAME TO received_file_content;
ALTER TABLE received_file_content RENAME CONSTRAINT ingest_file_content_pkey
  TO received_file_content_pkey;
ALTER TABLE received_file_content RENAME CONSTRAINT ingest_file_content_seq_check
  TO received_file_content_seq_check;
ALTER TABLE received_file_content RENAME CONSTRAINT ingest_file_content_tenant_id_file_id_fkey
  TO received_file_content_tenant_id_file_id_fkey;

CREATE VIEW ingest_record_key AS SELECT * FROM record_key;
CREATE VIEW ingest_outcome AS SELECT * FROM record_outcome;
CREATE VIEW ingest_review AS SELECT * FROM record_review;
CREATE VIEW ingest_file AS SELECT * FROM received_file;
CREATE VIEW ingest_file_content AS SELECT * FROM received_file_content;
