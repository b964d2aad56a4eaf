-- clearline:no-transaction
-- clearline:accepts-checksum 69b0e846e83ae472369c8ba6fef8284f160b32b8639a9043c67eb6f11625ed82
-- A reconciliation run finds the payment and the record of each transfer in its period by a probe
-- of these indexes (docs/decisions/0050), so that a day's run costs what the day holds, not what
-- the tenant has posted since it began. Partial: only rows a run can reach.
--
-- Built CONCURRENTLY, outside a transaction (docs/decisions/0083): payments and records are
-- written while the indexes build. The same indexes as this file's first text, which built them
-- in a transaction that stopped every write to both tables for the build (the checksum above).
CREATE INDEX CONCURRENTLY IF NOT EXISTS payment_transfer ON payment (tenant_id, transfer_key)
  WHERE transfer_key IS NOT NULL AND length(client_reference) > 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS ingest_record_key_transfer
  ON ingest_record_key (tenant_id, transfer_key)
  WHERE transfer_key IS NOT NULL;
