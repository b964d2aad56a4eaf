-- A file received again byte for byte is answered from the earlier file with those bytes that
-- applied every one of its records, without reading its records again (docs/decisions/0055).
-- The earlier file is found by its bytes' hash; the receipt names it, for the operator.
CREATE INDEX ingest_file_bytes ON ingest_file (tenant_id, bytes_sha256);
ALTER TABLE ingest_file ADD COLUMN same_bytes_as text;   -- the earlier file with these bytes whose records answered this one's
