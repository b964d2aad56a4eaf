-- The record and file tables' names before migration 0028, as views of the renamed tables, for
-- the processes of the release before it while a fleet is upgraded (docs/decisions/0083). 0028
-- makes them in its rename's transaction; a database that ran 0028's first text, without them,
-- gets them here, and one that has them gets the columns their tables gained since (0029's
-- arrival_key): either way the same views. Dropped by the release after this one (contract).
CREATE OR REPLACE VIEW ingest_record_key AS SELECT * FROM record_key;
CREATE OR REPLACE VIEW ingest_outcome AS SELECT * FROM record_outcome;
CREATE OR REPLACE VIEW ingest_review AS SELECT * FROM record_review;
CREATE OR REPLACE VIEW ingest_file AS SELECT * FROM received_file;
CREATE OR REPLACE VIEW ingest_file_content AS SELECT * FROM received_file_content;
