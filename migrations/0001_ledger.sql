-- The append-only double-entry ledger.
-- Every table leads its primary key with tenant_id: no transaction spans tenants, and the schema
-- can be distributed by tenant (Citus-style co-location) without redesign. Identities are
-- business keys, never global sequences.

CREATE TABLE account (
  tenant_id    text        NOT NULL,
  account_id   text        NOT NULL,
  kind         text        NOT NULL CHECK (kind IN ('customer', 'settlement', 'suspense', 'holds', 'clearing', 'revenue')),
  currency     char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, account_id)
);

CREATE TABLE transfer (
  tenant_id     text        NOT NULL,
  transfer_key  text        NOT NULL CHECK (length(transfer_key) BETWEEN 1 AND 512),
  kind          text        NOT NULL,
  value_date    date        NOT NULL,
  source_ref    text,       -- channel, file and position or request: where it came from (identifiers only)
  xact_id       xid8        NOT NULL DEFAULT pg_current_xact_id(),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, transfer_key)
);

CREATE TABLE ledger_entry (
  tenant_id     text        NOT NULL,
  entry_key     text        NOT NULL,
  transfer_key  text        NOT NULL,
  account_id    text        NOT NULL,
  direction     char(1)     NOT NULL CHECK (direction IN ('D', 'C')),
  amount_minor  bigint      NOT NULL CHECK (amount_minor > 0),
  currency      char(3)     NOT NULL,
  value_date    date        NOT NULL,
  -- The writing transaction's id: the balance projection advances up to the oldest transaction
  -- still running (pg_snapshot_xmin), so an entry committed late is never skipped.
  xact_id       xid8        NOT NULL DEFAULT pg_current_xact_id(),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, entry_key),
  FOREIGN KEY (tenant_id, transfer_key) REFERENCES transfer (tenant_id, transfer_key),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);

CREATE INDEX ledger_entry_transfer ON ledger_entry (tenant_id, transfer_key);
CREATE INDEX ledger_entry_account_xact ON ledger_entry (tenant_id, account_id, xact_id);
CREATE INDEX ledger_entry_xact ON ledger_entry (tenant_id, xact_id);

-- Append-only, enforced by the database itself: mistakes are fixed by new, keyed entries.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger rows are append-only: % on % refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER transfer_append_only BEFORE UPDATE OR DELETE ON transfer
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER transfer_no_truncate BEFORE TRUNCATE ON transfer
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE OR DELETE ON ledger_entry
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entry_no_truncate BEFORE TRUNCATE ON ledger_entry
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- Every transfer balances per currency and has at least two legs, checked at COMMIT (deferred),
-- so no code path, not even hand-written SQL, can commit an unbalanced transfer.
CREATE FUNCTION ledger_check_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unbalanced_currency text;
  legs integer;
BEGIN
  SELECT count(*) INTO legs FROM ledger_entry
   WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key;
  IF legs < 2 THEN
    RAISE EXCEPTION 'transfer % of tenant % has % legs; at least 2 required', NEW.transfer_key, NEW.tenant_id, legs
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT currency INTO unbalanced_currency FROM ledger_entry
   WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key
   GROUP BY currency
  HAVING sum(CASE direction WHEN 'D' THEN amount_minor ELSE 0 END)
      <> sum(CASE direction WHEN 'C' THEN amount_minor ELSE 0 END)
   LIMIT 1;
  IF unbalanced_currency IS NOT NULL THEN
    RAISE EXCEPTION 'transfer % of tenant % does not balance in %', NEW.transfer_key, NEW.tenant_id, unbalanced_currency
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

-- One check per transfer (not per entry) keeps the cost of the guarantee flat; the entry
-- trigger below makes sure no entry can join a transfer after that transfer's check ran.
CREATE CONSTRAINT TRIGGER transfer_balanced AFTER INSERT ON transfer
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_transfer_balanced();

-- An entry joins only a transfer created by the same transaction (so the deferred check above
-- sees it), and its currency is its account's currency.
CREATE FUNCTION ledger_check_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM transfer WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key
                    AND xact_id = pg_current_xact_id()) THEN
    RAISE EXCEPTION 'entry % joins transfer %, which was not created by this transaction', NEW.entry_key, NEW.transfer_key
      USING ERRCODE = 'check_violation';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM account WHERE tenant_id = NEW.tenant_id AND account_id = NEW.account_id AND currency = NEW.currency) THEN
    RAISE EXCEPTION 'entry % is in % but account % is not', NEW.entry_key, NEW.currency, NEW.account_id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER ledger_entry_check BEFORE INSERT ON ledger_entry
  FOR EACH ROW EXECUTE FUNCTION ledger_check_entry();

-- Balance projection: sums of entries up to a watermark, advanced in bounded batches. A balance
-- read is the projection plus the entries after the watermark, so no posting ever updates a hot
-- row (a settlement account takes every entry) and the projection can always be recomputed.
CREATE TABLE balance_projection_state (
  tenant_id   text        NOT NULL PRIMARY KEY,
  watermark   xid8        NOT NULL,   -- every entry with xact_id < watermark is in account_balance
  advanced_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_balance (
  tenant_id      text        NOT NULL,
  account_id     text        NOT NULL,
  debits_minor   numeric(38) NOT NULL DEFAULT 0,
  credits_minor  numeric(38) NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, account_id),
  FOREIGN KEY (tenant_id, account_id) REFERENCES account (tenant_id, account_id)
);
