-- The rule an account's available balance follows (docs/decisions/0102-booked-settled-available-
-- balances.md): 'booked' (available = booked, what every account did before) or
-- 'settled-credits' (money that raises the balance counts once booked and settled; money that
-- lowers it as soon as it is booked or settled).
--
-- account is small (one row per account, not per posting), and a constant default is a change of
-- the catalog only. The check is added NOT VALID and validated after, as on any table (0083).
-- A process of the release before never reads the column; it opens accounts with the default.
ALTER TABLE account ADD COLUMN available_rule text NOT NULL DEFAULT 'booked';
ALTER TABLE account ADD CONSTRAINT account_available_rule_check
  CHECK (available_rule IN ('booked', 'settled-credits')) NOT VALID;
ALTER TABLE account VALIDATE CONSTRAINT account_available_rule_check;
