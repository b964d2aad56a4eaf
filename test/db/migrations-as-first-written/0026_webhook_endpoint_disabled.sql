-- A webhook endpoint that answered 410 Gone is disabled, saying why (docs/decisions/0065). Its
-- undelivered events wait in the state 'held': neither retried nor dead-lettered, until
-- `clearline webhook enable` makes them due again. Events decided while it is disabled are not
-- written for it (enqueue skips disabled endpoints, as before).
ALTER TABLE webhook_endpoint ADD COLUMN disabled_reason text;

ALTER TABLE outbox_message DROP CONSTRAINT outbox_message_state_check;
ALTER TABLE outbox_message ADD CONSTRAINT outbox_message_state_check
  CHECK (state IN ('pending', 'delivering', 'delivered', 'dead', 'held'));

-- An endpoint's held events, counted by `webhook list` and released by `webhook enable`, without
-- reading its delivered rows.
CREATE INDEX outbox_message_held ON outbox_message (tenant_id, destination) WHERE state = 'held';
