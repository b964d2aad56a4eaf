-- Exact balances (docs/decisions/0012-exact-balances-from-delta-rows.md).
--
-- The xid8-watermark projection of 0001 could fold past entries that were not yet visible and
-- then never count them: balances ran ahead of or behind the entries, and the funds check let a
-- customer overdraw (regression: test/money/overdraft.test.ts). It is replaced by delta rows:
-- every statement that inserts ledger entries also inserts, in the same transaction, one row per
-- (account, transfer) with the sums it adds. A balance is account_balance plus the account's delta
-- rows, read in one statement. The projector moves delta rows into account_balance with DELETE ...
-- RETURNING in one transaction, so at every commit, for every account:
--     account_balance + sum(balance_delta) = sum(ledger_entry)
-- and any one snapshot sees either a delta row or its folded sum, never both and never neither.

-- The running sums up to the folded deltas; rebuilt from the entries themselves here, since the
-- old projection may have missed some.
DELETE FROM account_balance;
INSERT INTO account_balance (tenant_id, account_id, debits_minor, credits_minor)
SELECT tenant_id, account_id,
       coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0),
       coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)
  FROM ledger_entry GROUP BY tenant_id, account_id;

DROP TABLE balance_projection_state;
DROP INDEX ledger_entry_account_xact;
DROP INDEX ledger_entry_xact;
ALTER TABLE ledger_entry DROP COLUMN xact_id;
-- An account's entries: its statement (latest first, by created_at), reconciliation and verify.
CREATE INDEX ledger_entry_account ON ledger_entry (tenant_id, account_id, created_at);

-- One row per (account, transfer) not yet folded. The key is business identity, not a sequence:
-- a transfer touches an account once here however many legs it has there.
CREATE TABLE balance_delta (
  tenant_id      text        NOT NULL,
  account_id     text        NOT NULL,
  transfer_key   text        NOT NULL,
  debits_minor   numeric(38) NOT NULL,
  credits_minor  numeric(38) NOT NULL,
  PRIMARY KEY (tenant_id, account_id, transfer_key)
);

-- Written by the database itself for every entry insert, so no code path (nor hand-written SQL)
-- can post an entry that balances do not see. Once per statement over its transition table.
CREATE FUNCTION ledger_entry_to_balance_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO balance_delta AS d (tenant_id, account_id, transfer_key, debits_minor, credits_minor)
  SELECT tenant_id, account_id, transfer_key,
         coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0),
         coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)
    FROM new_entries
   GROUP BY tenant_id, account_id, transfer_key
   ORDER BY tenant_id, account_id, transfer_key
  ON CONFLICT (tenant_id, account_id, transfer_key) DO UPDATE
     SET debits_minor = d.debits_minor + excluded.debits_minor,
         credits_minor = d.credits_minor + excluded.credits_minor;
  RETURN NULL;
END $$;

CREATE TRIGGER ledger_entry_balance_delta AFTER INSERT ON ledger_entry
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entry_to_balance_delta();

