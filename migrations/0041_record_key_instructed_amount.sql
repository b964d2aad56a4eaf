-- A pacs.008's instructed amount and the charges its agents deducted, kept with its dedup mark so
-- that a leg of the same payment arriving in a later file is related to it by docs/decisions/0108
-- (same InstdAmt; settlement amount plus charges equal to it). NULL on every other record, on
-- keys written before this migration and by a process of the release before: such a key is
-- compared as 0023 says (settlement amounts equal).
--
-- Nullable columns without a default: a change of the catalog only, no rewrite and no scan of
-- record_key (docs/decisions/0083: an expand).
ALTER TABLE record_key ADD COLUMN instructed_amount_minor bigint;
ALTER TABLE record_key ADD COLUMN instructed_currency char(3);
ALTER TABLE record_key ADD COLUMN charges_minor bigint;
