-- Names for what the tables hold (docs/decisions/0068). The record tables serve every channel
-- (files, HTTP, ISO 8583), not file ingestion: ingest_record_key is each natural key's dedup mark
-- (record_key), ingest_outcome each file record's outcome (record_outcome), ingest_review each
-- held record waiting for a person (record_review). ingest_file and its content are the files
-- received (received_file, received_file_content). Renames only: no row is rewritten, so the
-- migration takes its locks for an instant whatever the tables hold. Indexes and constraints
-- follow their tables' names; renaming a primary key's constraint renames its index.

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
