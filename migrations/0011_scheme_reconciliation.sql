-- ISO 8583 reconciliation (0500/0510, 0520/0530; docs/decisions/0027-scheme-totals-reconciliation.md):
-- the scheme's totals for one settlement date, as received, beside ours for the same date and
-- the settlement code we answered. One row per reconciliation message (its natural key): a
-- repeat (0501, 0521) or a retransmission is answered from this row and compares nothing again.
CREATE TABLE iso8583_recon_totals (
  tenant_id        text        NOT NULL,
  natural_key      text        NOT NULL,   -- MTI class + 32 + 33 + 11 + 7, as for authorizations
  mti              text        NOT NULL,   -- 0500 or 0520 (or the repeat when only it arrived)
  settlement_date  date        NOT NULL,   -- field 15, its year resolved nearest to the day received
  currency         char(3)     NOT NULL,   -- field 50
  theirs           jsonb       NOT NULL,   -- { credits: {count, amountMinor}, creditReversals, debits, debitReversals, netMinor }
  ours             jsonb       NOT NULL,   -- the same, from our ISO 8583 records of that date
  settlement_code  char(1)     NOT NULL CHECK (settlement_code IN ('1', '2')),   -- field 66: 1 in balance, 2 out of balance
  run_id           text,                   -- the detail comparison a mismatch started (recon_run)
  response_mti     text        NOT NULL,
  response_fields  jsonb       NOT NULL,
  connection       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, natural_key)
);
CREATE INDEX iso8583_recon_totals_date ON iso8583_recon_totals (tenant_id, settlement_date);

-- Our totals for a settlement date are read from the channel's records of that day.
CREATE INDEX iso8583_inbound_created ON iso8583_inbound (tenant_id, created_at);
CREATE INDEX iso8583_inbound_reversal_created ON iso8583_inbound_reversal (tenant_id, created_at);
