-- Our net per transfer on each settlement account, kept at posting (docs/decisions/0049).
--
-- A reconciliation run compares a settlement account's statement with our transfers on that
-- account over a period, one net amount per transfer. Grouping the account's entries per transfer
-- was the largest single piece of the run's statement left (0044: about a third of its CPU). The
-- ledger's own statement trigger now keeps that net as one row per (account, value date, transfer)
-- for settlement accounts (the only kind a run accepts), in the posting's transaction, the way it
-- keeps balance_delta (0005). The run reads the period's rows by primary-key range, no grouping.
--
-- An entry's value date is its transfer's (every writer has always done so; it is enforced from
-- here on), so a transfer has one row per settlement account it touches, and "the transfer's
-- entries on the account inside the period" and "the transfer's row inside the period" are the
-- same set.

CREATE TABLE settlement_transfer_net (
  tenant_id     text   NOT NULL,
  account_id    text   NOT NULL,
  value_date    date   NOT NULL,
  transfer_key  text   NOT NULL,
  signed_minor  bigint NOT NULL,   -- the transfer's debits minus its credits on the account
  PRIMARY KEY (tenant_id, account_id, value_date, transfer_key)
);

-- Only the ledger's trigger writes it (nested in the insert of entries: trigger depth 2); a change
-- by hand, or a delete, would make a run disagree with the entries. verifyLedger compares the two.
CREATE FUNCTION settlement_transfer_net_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR TG_OP = 'UPDATE' THEN
    IF pg_trigger_depth() >= 2 THEN RETURN NULL; END IF;
  END IF;
  RAISE EXCEPTION 'settlement_transfer_net is kept by the ledger''s entry trigger: % refused', TG_OP
    USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER settlement_transfer_net_guard BEFORE INSERT OR UPDATE OR DELETE ON settlement_transfer_net
  FOR EACH STATEMENT EXECUTE FUNCTION settlement_transfer_net_guard();
CREATE TRIGGER settlement_transfer_net_no_truncate BEFORE TRUNCATE ON settlement_transfer_net
  FOR EACH STATEMENT EXECUTE FUNCTION settlement_transfer_net_guard();

DO $$
DECLARE
  bad text;
BEGIN
  SELECT e.tenant_id || '/' || e.transfer_key INTO bad
    FROM ledger_entry e JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
   WHERE e.value_date <> t.value_date
   LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'migration 0022: transfer % has an entry whose value date is not the transfer''s; correct it before this migration', bad;
  END IF;
END $$;

-- The rows for what is already posted. The guard refuses writes outside the entry trigger, so it
-- is off for this one statement (the migration's own transaction).
ALTER TABLE settlement_transfer_net DISABLE TRIGGER settlement_transfer_net_guard;
INSERT INTO settlement_transfer_net (tenant_id, account_id, value_date, transfer_key, signed_minor)
SELECT e.tenant_id, e.account_id, e.value_date, e.transfer_key,
       sum(CASE e.direction WHEN 'D' THEN e.amount_minor ELSE -e.amount_minor END)::bigint
  FROM ledger_entry e JOIN account a ON a.tenant_id = e.tenant_id AND a.account_id = e.account_id
 WHERE a.kind = 'settlement'
 GROUP BY e.tenant_id, e.account_id, e.value_date, e.transfer_key;
ALTER TABLE settlement_transfer_net ENABLE TRIGGER settlement_transfer_net_guard;

-- 0009's statement trigger with two additions: an entry's value date must be its transfer's (read
-- in the same probe as the transfer's writer), and the settlement nets.
CREATE OR REPLACE FUNCTION ledger_entry_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad_tenant   text;
  bad_transfer text;
  bad_account  text;
  bad_currency text;
  bad_date     date;
  legs         bigint;
BEGIN
  SELECT x.tenant_id, x.transfer_key, x.value_date INTO bad_tenant, bad_transfer, bad_date
    FROM (SELECT DISTINCT tenant_id, transfer_key, value_date FROM new_entries) x
   WHERE (SELECT ROW(t.xact_id, t.value_date) FROM transfer t WHERE t.tenant_id = x.tenant_id AND t.transfer_key = x.transfer_key)
         IS DISTINCT FROM ROW(pg_current_xact_id(), x.value_date)
   LIMIT 1;
  IF bad_transfer IS NOT NULL THEN
    -- Which of the two it was is read again only here, on the way to the refusal.
    IF EXISTS (SELECT 1 FROM transfer t WHERE t.tenant_id = bad_tenant AND t.transfer_key = bad_transfer AND t.xact_id = pg_current_xact_id()) THEN
      RAISE EXCEPTION 'an entry of transfer % is dated %, which is not the transfer''s value date', bad_transfer, bad_date
        USING ERRCODE = 'check_violation';
    END IF;
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

  -- One grouping of the statement's entries per (account, transfer) feeds both the balance delta
  -- rows (0005) and, for settlement accounts, the nets (an entry's value date is its transfer's,
  -- checked above, so the date adds no group). The accounts' kinds are read once per distinct
  -- account, a primary-key probe each, as the currency check above does.
  WITH grouped AS MATERIALIZED (
    SELECT tenant_id, account_id, transfer_key, value_date,
           coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0) AS debits_minor,
           coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0) AS credits_minor
      FROM new_entries
     GROUP BY tenant_id, account_id, transfer_key, value_date
  ), deltas AS (
    INSERT INTO balance_delta AS d (tenant_id, account_id, transfer_key, debits_minor, credits_minor)
    SELECT tenant_id, account_id, transfer_key, debits_minor, credits_minor
      FROM grouped
     ORDER BY tenant_id, account_id, transfer_key
    ON CONFLICT (tenant_id, account_id, transfer_key) DO UPDATE
       SET debits_minor = d.debits_minor + excluded.debits_minor,
           credits_minor = d.credits_minor + excluded.credits_minor
  ), settlement AS (
    SELECT x.tenant_id, x.account_id
      FROM (SELECT DISTINCT tenant_id, account_id FROM grouped) x
     WHERE (SELECT a.kind FROM account a WHERE a.tenant_id = x.tenant_id AND a.account_id = x.account_id) = 'settlement'
  )
  INSERT INTO settlement_transfer_net AS n (tenant_id, account_id, value_date, transfer_key, signed_minor)
  SELECT g.tenant_id, g.account_id, g.value_date, g.transfer_key, (g.debits_minor - g.credits_minor)::bigint
    FROM grouped g JOIN settlement s ON s.tenant_id = g.tenant_id AND s.account_id = g.account_id
   ORDER BY g.tenant_id, g.account_id, g.value_date, g.transfer_key
  ON CONFLICT (tenant_id, account_id, value_date, transfer_key) DO UPDATE
     SET signed_minor = n.signed_minor + excluded.signed_minor;
  RETURN NULL;
END $$;
