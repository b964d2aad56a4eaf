-- clearline:no-transaction
-- Ledger verification checkpoints (docs/decisions/0089-incremental-ledger-verify.md).
-- Developed as 0030 on its branch; 0031 once merged after 0030 (old table names as views).
--
-- A verify run reads the ledger in one snapshot. What it verified is "every transfer whose writing
-- transaction is visible in that snapshot" (transfer.xact_id, which every entry shares with its
-- transfer: the entry trigger of 0009/0022 refuses any other), so the snapshot itself is the
-- position a checkpoint records. The next run checks only the transfers NOT visible in it, found
-- by the index below from the snapshot's xmin up; PostgreSQL's own visibility rule
-- (pg_visible_in_snapshot) tells which of those were already verified, so nothing is counted
-- twice or missed, whatever order transactions commit in.

-- New transfers of a tenant, from a checkpoint's xmin up. A transaction's transfers share one
-- xact_id, so the index deduplicates them (one posting list per transaction) and inserts land at
-- its right edge.
-- Built CONCURRENTLY outside a transaction: transfer grows with traffic (docs/decisions/0083).
CREATE INDEX CONCURRENTLY IF NOT EXISTS transfer_xact ON transfer (tenant_id, xact_id);

BEGIN;

-- One row per verify run that passed, per tenant: where it got to and the totals to continue from.
CREATE TABLE IF NOT EXISTS ledger_verify_checkpoint (
  tenant_id      text        NOT NULL,
  checkpoint_no  bigint      NOT NULL CHECK (checkpoint_no > 0),
  snapshot       pg_snapshot NOT NULL,   -- verified: the transfers whose writer is visible in it
  mode           text        NOT NULL CHECK (mode IN ('full', 'incremental')),
  transfers      bigint      NOT NULL CHECK (transfers >= 0),   -- totals verified up to here
  entries        bigint      NOT NULL CHECK (entries >= 0),
  new_transfers  bigint      NOT NULL CHECK (new_transfers >= 0),   -- beyond the previous one
  new_entries    bigint      NOT NULL CHECK (new_entries >= 0),
  verified_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, checkpoint_no)
);

CREATE OR REPLACE TRIGGER ledger_verify_checkpoint_append_only BEFORE UPDATE OR DELETE ON ledger_verify_checkpoint
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE OR REPLACE TRIGGER ledger_verify_checkpoint_no_truncate BEFORE TRUNCATE ON ledger_verify_checkpoint
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- The running sums per account at the tenant's latest checkpoint: the sums of the account's
-- entries visible in that checkpoint's snapshot. A run rewrites only the accounts its new entries
-- moved (checkpoint_no says which run last did). Trusted by the incremental run, recomputed from
-- the entries and compared by every full run.
CREATE TABLE IF NOT EXISTS ledger_verify_account (
  tenant_id      text        NOT NULL,
  account_id     text        NOT NULL,
  checkpoint_no  bigint      NOT NULL,
  entries        bigint      NOT NULL CHECK (entries >= 0),
  debits_minor   numeric(38) NOT NULL,
  credits_minor  numeric(38) NOT NULL,
  PRIMARY KEY (tenant_id, account_id)
);

COMMIT;
