-- The ISO 8583 gateway: cards known by a keyed hash, the inbound (issuer side) transactions and
-- reversals with their stored responses, and the outbound (acquirer side) authorizations with
-- their reversals. No table holds a PAN, track data, PIN block or EMV data: a card is its keyed
-- hash (per-tenant key, docs/decisions/0020), its BIN and its last four digits, and stored
-- messages are kept without fields 2, 35, 45, 52 and 55.

-- Issuer BINs: which tenant an inbound message belongs to. A BIN belongs to one tenant, so the
-- BIN alone is unique; this small table is a reference table when distributed by tenant.
CREATE TABLE card_issuer_bin (
  tenant_id   text        NOT NULL,
  bin         text        NOT NULL CHECK (bin ~ '^[0-9]{6}$'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, bin),
  UNIQUE (bin)
);

CREATE TABLE card (
  tenant_id   text        NOT NULL,
  card_hash   text        NOT NULL CHECK (card_hash ~ '^[0-9a-f]{64}$'),  -- HMAC-SHA256(tenant key, PAN)
  bin         text        NOT NULL CHECK (bin ~ '^[0-9]{6}$'),
  last_four   text        NOT NULL CHECK (last_four ~ '^[0-9]{4}$'),
  account_id  text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, card_hash),
  FOREIGN KEY (tenant_id, bin) REFERENCES card_issuer_bin (tenant_id, bin),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);

-- One row per inbound original (authorization, financial, advice), keyed by its natural key
-- (MTI class + 32 + 33 + 11 + 7); the RRN (37) is a second unique link. The decision and the
-- response (without card data) are stored in the transaction that made the effect, before the
-- response is written to the socket; a repeat is answered from here.
CREATE TABLE iso8583_inbound (
  tenant_id        text        NOT NULL,
  natural_key      text        NOT NULL,
  mti_class        text        NOT NULL,      -- 010 authorization, 012 auth advice, 020 financial, 022 financial advice
  retrieval_reference_number text,            -- DE 37 RRN
  mti              text        NOT NULL,      -- as first received (0100, or 0101 when only the repeat arrived)
  fingerprint      text        NOT NULL,      -- sha256 of class, card hash, amount and currency
  card_hash        text,
  account_id       text,
  amount_minor     bigint      NOT NULL CHECK (amount_minor >= 0),
  currency         char(3),
  outcome          text        NOT NULL CHECK (outcome IN ('held', 'posted', 'posted_to_suspense', 'declined', 'refused_after_reversal')),
  response_code    text        NOT NULL,
  response_mti     text        NOT NULL,
  response_fields  jsonb       NOT NULL,      -- the response without card data; field 2 is echoed from the request
  effect_key       text,                      -- the ledger transfer made, if any
  connection       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, natural_key)
);
CREATE UNIQUE INDEX iso8583_inbound_rrn ON iso8583_inbound (tenant_id, mti_class, retrieval_reference_number)
  WHERE retrieval_reference_number IS NOT NULL;
-- A reversal without a PAN is routed to its tenant through its original.
CREATE INDEX iso8583_inbound_natural_key ON iso8583_inbound (natural_key);

-- At most one reversal per original: keyed by the original's natural key (from field 90). An
-- orphan (original never seen) is a row too, and refuses the original when it arrives late.
CREATE TABLE iso8583_inbound_reversal (
  tenant_id        text        NOT NULL,
  original_key     text        NOT NULL,
  natural_key      text        NOT NULL,      -- the reversal message's own key (04x class + 32 + 33 + 11 + 7)
  mti              text        NOT NULL,
  fingerprint      text        NOT NULL,
  amount_minor     bigint      NOT NULL CHECK (amount_minor >= 0),
  outcome          text        NOT NULL CHECK (outcome IN ('released', 'reversed', 'nothing_to_reverse', 'orphan')),
  response_code    text        NOT NULL,
  response_mti     text        NOT NULL,
  response_fields  jsonb       NOT NULL,
  effect_key       text,
  connection       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, original_key)
);

-- Outbound authorizations (acquirer side), one per (tenant, Idempotency-Key) of
-- POST /v1/card-authorizations. Persisted before the 0100 is sent; the reversal (0400, then 0401
-- repeats) is persisted before it is sent and repeated until a 0410 arrives.
CREATE TABLE iso8583_outbound (
  tenant_id          text        NOT NULL,
  idem_key           text        NOT NULL,
  attempt            integer     NOT NULL,     -- the idempotency attempt that sent it (fencing token)
  connection         text        NOT NULL,     -- the configured scheme connection's name
  match_key          text        NOT NULL,     -- class + STAN + terminal + transmission time
  system_trace_audit_number text NOT NULL,     -- DE 11 STAN
  retrieval_reference_number text NOT NULL,    -- DE 37 RRN
  card_hash          text        NOT NULL,
  card_bin           text        NOT NULL,
  card_last_four     text        NOT NULL,
  amount_minor       bigint      NOT NULL CHECK (amount_minor > 0),
  currency           char(3)     NOT NULL,
  request_fields     jsonb       NOT NULL,     -- the 0100 without card data
  state              text        NOT NULL CHECK (state IN ('sent', 'approved', 'declined', 'reversed')),
  response_code      text,
  response_fields    jsonb,
  late_response_code text,                     -- a response that arrived after the reversal was decided
  reversal_match_key text,
  reversal_fields    jsonb,                    -- the 0400 as persisted before its first send
  reversal_state     text        CHECK (reversal_state IN ('pending', 'acknowledged')),
  reversal_sends     integer     NOT NULL DEFAULT 0,
  reversal_next_at   timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  decided_at         timestamptz,
  PRIMARY KEY (tenant_id, idem_key),
  CHECK ((reversal_state IS NULL) = (reversal_fields IS NULL))
);
CREATE INDEX iso8583_outbound_reversal_due ON iso8583_outbound (reversal_next_at) WHERE reversal_state = 'pending';
-- Responses are matched by connection + match key (a late 0110, a 0410 after a restart); the
-- reversal job finds sends whose caller died before deciding.
CREATE INDEX iso8583_outbound_match ON iso8583_outbound (connection, match_key);
CREATE INDEX iso8583_outbound_reversal_match ON iso8583_outbound (connection, reversal_match_key) WHERE reversal_state = 'pending';
CREATE INDEX iso8583_outbound_undecided ON iso8583_outbound (connection, created_at) WHERE state = 'sent';

-- STANs are a property of a connection, not of a tenant: each connection takes blocks of a
-- counter and numbers its messages from them, wrapping at 999999 (unique per day and connection
-- as long as fewer than 999,999 messages are sent a day). Connection state, like the migration
-- table, not tenant data.
CREATE TABLE iso8583_stan_counter (
  connection  text   NOT NULL PRIMARY KEY,
  allocated   bigint NOT NULL CHECK (allocated >= 0)
);
