-- The settlement date of every transfer (docs/decisions/0101-settlement-date-of-every-transfer.md).
--
-- Nullable and without a default: adding it is a change of the catalog only, no rewrite of the
-- transfer table and no scan (docs/decisions/0083: an expand). Every transfer this release posts
-- writes it. The rows posted before stay NULL, and every reader takes
-- coalesce(settlement_date, value_date): the backfill rule is "a transfer whose settlement date
-- was not recorded settles on its value date". No UPDATE backfill runs, and none could: the
-- transfer table refuses UPDATE (append-only, migration 0001).
ALTER TABLE transfer ADD COLUMN settlement_date date;
