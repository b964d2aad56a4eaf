-- clearline:no-transaction
-- The HTTP API's lists page by keyset (issue 33 item 7, src/db/list-place.ts): each list is read
-- in the order of its rows' creation time and then their id, a page starting after the place of
-- the last row a client saw. One index per list serves both the order and the start, so a page is
-- one index range of at most limits.http.listPageItemsMax rows, whatever the page's depth.
--
-- Built CONCURRENTLY, statement by statement (docs/decisions/0083): payments, refunds, files,
-- reviews and differences are written while they build. Expands only: nothing is dropped (the
-- files' (tenant_id, received_at) index stays for the release before). Transfers need none: their
-- list follows the transaction id the ledger indexes since 0001 (transfer_xact), and the ledger's
-- hot path gains no index.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payment_created
  ON payment (tenant_id, created_at, payment_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS refund_created
  ON refund (tenant_id, created_at, refund_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS received_file_received_page
  ON received_file (tenant_id, received_at, file_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS record_review_created
  ON record_review (tenant_id, created_at, review_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recon_difference_first_seen
  ON recon_difference (tenant_id, first_seen_at, difference_id);
