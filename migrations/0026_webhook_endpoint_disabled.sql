-- clearline:no-transaction
-- clearline:accepts-checksum 15248009884166b01a5e244157998230924d93d1729147fc85d5a7bdd035001f
-- A webhook endpoint that answered 410 Gone is disabled, saying why (docs/decisions/0065). Its
-- undelivered events wait in the state 'held': neither retried nor dead-lettered, until
-- `clearline webhook enable` makes them due again. Events decided while it is disabled are not
-- written for it (enqueue skips disabled endpoints, as before).
--
-- Statement by statement (docs/decisions/0083): the widened CHECK is added NOT VALID in the
-- transaction that drops the old one, then validated by a scan that lets writes go on, and the
-- index is built CONCURRENTLY. The same schema as this file's first text (the checksum above).
ALTER TABLE webhook_endpoint ADD COLUMN IF NOT EXISTS disabled_reason text;

BEGIN;
ALTER TABLE outbox_message DROP CONSTRAINT IF EXISTS outbox_message_state_check;
ALTER TABLE outbox_message ADD CONSTRAINT outbox_message_state_check
  CHECK (state IN ('pending', 'delivering', 'delivered', 'dead', 'held')) NOT VALID;
COMMIT;
ALTER TABLE outbox_message VALIDATE CONSTRAINT outbox_message_state_check;

-- An endpoint's held events, counted by `webhook list` and released by `webhook enable`, without
-- reading its delivered rows.
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_message_held ON outbox_message (tenant_id, destination)
  WHERE state = 'held';
