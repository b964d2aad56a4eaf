-- clearline:no-transaction
-- clearline:accepts-checksum 5975051a17508e166a86c2f16614713a450408f64b77cad620b71bb595798574
-- A fleet of `clearline serve` processes on one database (docs/decisions/0072).
--
-- Statement by statement (docs/decisions/0083): the new column's CHECK is added NOT VALID and
-- validated after (a scan that lets writes go on), the unique index is built CONCURRENTLY. The
-- same schema as this file's first text (the checksum above), whose ADD COLUMN ... CHECK scanned
-- received_file and whose index build stopped its writes.
--
-- fleet_lease: who holds each file source, singleton job and the outbound scheme link. A grant
-- to a new holder bumps `token` (the fencing token); a holder renews `lease_until` on the
-- database's clock, never its own. These rows are the fleet's, not a tenant's: they are keyed by
-- the lease's name alone and stay on the coordinator when tenants are distributed
-- (docs/operations/scaling.md).
CREATE TABLE IF NOT EXISTS fleet_lease (
  lease_name            text PRIMARY KEY CHECK (length(lease_name) BETWEEN 1 AND 600),
  holder                text NOT NULL,          -- host/pid/nonce of the process holding it
  holder_address        text,                   -- that process's HTTP address, for status
  token                 bigint NOT NULL CHECK (token > 0),
  acquired_at           timestamptz NOT NULL,   -- when this holder was granted it (this token)
  renewed_at            timestamptz NOT NULL,
  lease_until           timestamptz NOT NULL,
  released_at           timestamptz,            -- the holder let it go (a graceful stop)
  -- The grant before this one: how long the lease took to move is read from here, on the
  -- database's clock (acquired_at - previous_renewed_at), never from a test's or a process's.
  previous_holder       text,
  previous_renewed_at   timestamptz,
  previous_lease_until  timestamptz
);

-- One run per singleton job and period, whichever process holds the job's lease: the claim is
-- made only with the current token, so a process that lost the lease cannot run a period again.
CREATE TABLE IF NOT EXISTS fleet_job_run (
  job_name      text NOT NULL,
  period_start  timestamptz NOT NULL,
  holder        text NOT NULL,
  token         bigint NOT NULL,
  claimed_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (job_name, period_start)
);

-- A file a source found (a drop folder's file, an SFTP partner's file) is received once, however
-- many processes see it: the source's identity of the arrival (name, size, modification time and
-- inode, or the SFTP listing's) is claimed with the receipt. A lease makes one process take
-- files (liveness); this index makes a second receipt impossible (safety). Uploads through HTTP or
-- the CLI have no such identity (NULL) and are deduplicated by their records, as before.
ALTER TABLE received_file ADD COLUMN IF NOT EXISTS arrival_key text;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                  WHERE conrelid = 'received_file'::regclass
                    AND conname = 'received_file_arrival_key_check') THEN
    ALTER TABLE received_file ADD CONSTRAINT received_file_arrival_key_check
      CHECK (length(arrival_key) <= 1000) NOT VALID;
  END IF;
END $$;
ALTER TABLE received_file VALIDATE CONSTRAINT received_file_arrival_key_check;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS received_file_arrival
  ON received_file (tenant_id, partner_id, source, arrival_key)
  WHERE arrival_key IS NOT NULL;
