-- clearline:no-transaction
-- clearline:accepts-checksum a1bf99046ac6cea34dd5db2883866946d551deab1e6049700f5d2ec2e0219550
-- A file received again byte for byte is answered from the earlier file with those bytes that
-- applied every one of its records, without reading its records again (docs/decisions/0055).
-- The earlier file is found by its bytes' hash; the receipt names it, for the operator.
--
-- The index is built CONCURRENTLY and the column added without a default, each statement on its
-- own (docs/decisions/0083): the same schema as this file's first text (the checksum above).
CREATE INDEX CONCURRENTLY IF NOT EXISTS ingest_file_bytes ON ingest_file (tenant_id, bytes_sha256);
-- the earlier file with these bytes whose records answered this one's
ALTER TABLE ingest_file ADD COLUMN IF NOT EXISTS same_bytes_as text;
