-- Tenants, HTTP idempotency records, payments and refunds, and the dedup audit trail shared by
-- every channel.

CREATE TABLE tenant (
  tenant_id     text        NOT NULL PRIMARY KEY,
  name          text        NOT NULL UNIQUE,
  api_key_hash  text        NOT NULL UNIQUE,   -- sha256 of the API key; the key itself is shown once
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Responses kept for replay, one row per (tenant, endpoint, key). Not partitioned by time: a
-- unique index on a time-partitioned table must include the time column and stops protecting
-- (docs/decisions/0003). Expired rows are removed by a bounded delete job.
CREATE TABLE idempotency_record (
  tenant_id        text        NOT NULL,
  endpoint         text        NOT NULL,
  idem_key         text        NOT NULL,
  request_digest   text        NOT NULL,
  request_canonical jsonb      NOT NULL,   -- the validated request, to name what differs on reuse
  state            text        NOT NULL CHECK (state IN ('in_progress', 'completed')),
  lease_until      timestamptz NOT NULL,
  attempt          integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),  -- fencing token
  response_status  integer,
  response_body    text,       -- stored byte for byte, replayed as is
  effect_ref       text,       -- what the request did (payment id, refund id)
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, endpoint, idem_key),
  CHECK (state = 'in_progress' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
);
CREATE INDEX idempotency_record_expiry ON idempotency_record (expires_at);
CREATE INDEX idempotency_record_in_progress ON idempotency_record (created_at) WHERE state = 'in_progress';

-- A payment intent, identified by the initiator's client_reference for ever (no expiry): after
-- the replay window a new key with the same intent still never posts twice.
CREATE TABLE payment (
  tenant_id         text        NOT NULL,
  payment_id        text        NOT NULL,
  client_reference  text        NOT NULL,
  status            text        NOT NULL CHECK (status IN ('succeeded', 'declined')),
  decline_code      text,
  amount_minor      bigint      NOT NULL CHECK (amount_minor > 0),
  currency          char(3)     NOT NULL,
  debtor_account    text        NOT NULL,
  creditor_account  text        NOT NULL,
  description       text,
  transfer_key      text,
  refunded_minor    bigint      NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor),
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, payment_id),
  UNIQUE (tenant_id, client_reference)
);

CREATE TABLE refund (
  tenant_id         text        NOT NULL,
  refund_id         text        NOT NULL,
  client_reference  text        NOT NULL,
  payment_id        text        NOT NULL,
  status            text        NOT NULL CHECK (status IN ('succeeded', 'declined')),
  decline_code      text,
  amount_minor      bigint      NOT NULL CHECK (amount_minor > 0),
  currency          char(3)     NOT NULL,
  transfer_key      text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, refund_id),
  UNIQUE (tenant_id, client_reference),
  FOREIGN KEY (tenant_id, payment_id) REFERENCES payment (tenant_id, payment_id)
);

-- Every dedup decision leaves a record: which key, when, through which channel and position,
-- why, and what the original effect was. A silent drop is a defect.
CREATE TABLE dedup_event (
  tenant_id     text        NOT NULL,
  event_id      uuid        NOT NULL DEFAULT gen_random_uuid(),
  channel       text        NOT NULL,   -- http, ach, iso20022, iso8583
  scope         text        NOT NULL,   -- endpoint, file id, connection
  dedup_key     text        NOT NULL,
  reason        text        NOT NULL,   -- replayed, key_reuse, in_progress, duplicate_client_reference, ...
  original_ref  text,
  position      text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX dedup_event_key ON dedup_event (tenant_id, dedup_key);
