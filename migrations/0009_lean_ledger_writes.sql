-- Lean ledger writes (docs/decisions/0030-lean-ledger-writes.md).
--
-- The guarantees stay what 0001 and 0005 made them: entries are append-only, every transfer
-- balances per currency with at least two legs, an entry joins only a transfer created by its own
-- transaction, and its currency is its account's. What changes is how they are paid for: once per
-- statement over its transition table instead of once per row (a BEFORE INSERT trigger, two
-- foreign-key checks per entry and two aggregate queries per transfer at commit).
--
-- Per statement, the entries it inserts must balance among themselves for each transfer and
-- currency. A transfer's entries are then a union of balanced groups, so it balances at commit
-- without being read again; all that is left for commit is that it has entries at all.

-- Accounts are referenced by entries without a foreign key now, so they are never removed or
-- re-keyed: the same refusal the ledger tables have. (kind may not change either: a customer
-- account's funds check depends on it.)
CREATE FUNCTION account_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.tenant_id = OLD.tenant_id AND NEW.account_id = OLD.account_id
     AND NEW.currency = OLD.currency AND NEW.kind = OLD.kind THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'accounts are permanent: % of account refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER account_permanent BEFORE UPDATE OR DELETE ON account
  FOR EACH ROW EXECUTE FUNCTION account_refuse_change();
CREATE TRIGGER account_no_truncate BEFORE TRUNCATE ON account
  FOR EACH STATEMENT EXECUTE FUNCTION account_refuse_change();

DROP TRIGGER ledger_entry_check ON ledger_entry;
DROP FUNCTION ledger_check_entry();
DROP TRIGGER transfer_balanced ON transfer;
DROP FUNCTION ledger_check_transfer_balanced();
DROP TRIGGER ledger_entry_balance_delta ON ledger_entry;
DROP FUNCTION ledger_entry_to_balance_delta();
ALTER TABLE ledger_entry DROP CONSTRAINT ledger_entry_tenant_id_transfer_key_fkey;
ALTER TABLE ledger_entry DROP CONSTRAINT ledger_entry_tenant_id_account_id_fkey;

-- One pass over the statement's new entries: the checks, then the balance delta rows (0005).
-- The lookups are scalar subqueries over the distinct transfers and accounts of the statement,
-- so each is one primary-key probe: a join would let the planner, which knows nothing of the
-- transition table's size, scan the whole transfer table.
CREATE FUNCTION ledger_entry_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad_transfer text;
  bad_account  text;
  bad_currency text;
  legs         bigint;
BEGIN
  SELECT x.transfer_key INTO bad_transfer
    FROM (SELECT DISTINCT tenant_id, transfer_key FROM new_entries) x
   WHERE (SELECT t.xact_id FROM transfer t WHERE t.tenant_id = x.tenant_id AND t.transfer_key = x.transfer_key)
         IS DISTINCT FROM pg_current_xact_id()
   LIMIT 1;
  IF bad_transfer IS NOT NULL THEN
    RAISE EXCEPTION 'an entry joins transfer %, which was not created by this transaction', bad_transfer
      USING ERRCODE = 'check_violation';
  END IF;

  SELECT x.account_id, x.currency INTO bad_account, bad_currency
    FROM (SELECT DISTINCT tenant_id, account_id, currency FROM new_entries) x
   WHERE (SELECT a.currency FROM account a WHERE a.tenant_id = x.tenant_id AND a.account_id = x.account_id)
         IS DISTINCT FROM x.currency
   LIMIT 1;
  IF bad_account IS NOT NULL THEN
    RAISE EXCEPTION 'an entry is in % but account % is not (or does not exist)', bad_currency, bad_account
      USING ERRCODE = 'check_violation';
  END IF;

  SELECT x.transfer_key, x.currency, count(*) INTO bad_transfer, bad_currency, legs
    FROM new_entries x
   GROUP BY x.tenant_id, x.transfer_key, x.currency
  HAVING count(*) < 2
      OR sum(CASE x.direction WHEN 'D' THEN x.amount_minor ELSE 0 END)
      <> sum(CASE x.direction WHEN 'C' THEN x.amount_minor ELSE 0 END)
   LIMIT 1;
  IF bad_transfer IS NOT NULL AND legs < 2 THEN
    RAISE EXCEPTION 'transfer % has % legs in % in one statement; at least 2 required', bad_transfer, legs, bad_currency
      USING ERRCODE = 'check_violation';
  ELSIF bad_transfer IS NOT NULL THEN
    RAISE EXCEPTION 'transfer % does not balance in % (the entries of one statement must balance per transfer)', bad_transfer, bad_currency
      USING ERRCODE = 'check_violation';
  END IF;

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

CREATE TRIGGER ledger_entry_after_insert AFTER INSERT ON ledger_entry
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entry_after_insert();

-- At commit, one index probe per transfer: a transfer without entries is refused. (A constraint
-- trigger can only be per row; this is the one per-row piece left, and it reads one index page.)
CREATE FUNCTION ledger_check_transfer_has_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger_entry WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key) THEN
    RAISE EXCEPTION 'transfer % of tenant % has 0 legs; at least 2 required', NEW.transfer_key, NEW.tenant_id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER transfer_has_entries AFTER INSERT ON transfer
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_transfer_has_entries();
