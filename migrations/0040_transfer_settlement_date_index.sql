-- clearline:no-transaction
-- The transfers of a tenant that settle on a date (docs/decisions/0101), for the settlement
-- totals of a partner and day (issue 30 item 5): without it, a day's totals read every entry a
-- settlement account ever had. The expression is the one every reader uses: a transfer posted
-- before 0035 settles on its value date.
-- Built CONCURRENTLY outside a transaction: transfer grows with traffic (docs/decisions/0083).
CREATE INDEX CONCURRENTLY IF NOT EXISTS transfer_settles
  ON transfer (tenant_id, (coalesce(settlement_date, value_date)));
