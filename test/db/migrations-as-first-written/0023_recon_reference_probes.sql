-- A reconciliation run finds the payment and the record of each transfer in its period by a probe
-- of these indexes (docs/decisions/0050), so that a day's run costs what the day holds, not what
-- the tenant has posted since it began. Partial: only rows a run can reach.
CREATE INDEX payment_transfer ON payment (tenant_id, transfer_key)
  WHERE transfer_key IS NOT NULL AND length(client_reference) > 0;
CREATE INDEX ingest_record_key_transfer ON ingest_record_key (tenant_id, transfer_key)
  WHERE transfer_key IS NOT NULL;
