import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";

/**
 * The SQL of fleet_lease (docs/decisions/0072). Every time is the database's clock
 * (clock_timestamp(): the moment the statement runs, also inside a longer transaction), never a
 * process's: the processes of a fleet may disagree about the time, the database is one clock.
 */

/** A lease as granted to one holder: its fencing token names this grant. */
export interface Grant {
  leaseName: string;
  holder: string;
  token: bigint;
}

export interface LeaseRow {
  leaseName: string;
  holder: string;
  holderAddress: string | null;
  token: bigint;
  acquiredAt: Date;
  renewedAt: Date;
  leaseUntil: Date;
  releasedAt: Date | null;
  live: boolean;                 // lease_until is still ahead on the database's clock
  previousHolder: string | null;
  previousRenewedAt: Date | null;
}

const untilSql = (msParam: string) =>
  `clock_timestamp() + make_interval(secs => ${msParam}::double precision / 1000)`;

/**
 * Takes the lease when nobody holds it, its holder let it go, or its lease ran out; a grant to a
 * holder bumps the token, so every earlier grant is fenced off. The holder that held it before is
 * kept on the row. Undefined when a live holder has it.
 */
export async function acquireLease(
  db: Queryable,
  lease: { leaseName: string; holder: string; holderAddress?: string; leaseMs: number },
): Promise<Grant | undefined> {
  const { rows } = await db.query<{ token: bigint }>(
    `INSERT INTO fleet_lease AS l
            (lease_name, holder, holder_address, token, acquired_at, renewed_at, lease_until)
     VALUES ($1, $2, $3, 1, clock_timestamp(), clock_timestamp(), ${untilSql("$4")})
     ON CONFLICT (lease_name) DO UPDATE
        SET holder = excluded.holder, holder_address = excluded.holder_address, token = l.token + 1,
            acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at,
            lease_until = excluded.lease_until, released_at = NULL,
            previous_holder = l.holder, previous_renewed_at = l.renewed_at,
            previous_lease_until = l.lease_until
      WHERE l.lease_until <= clock_timestamp() OR l.holder = excluded.holder
     RETURNING token`,
    [lease.leaseName, lease.holder, lease.holderAddress ?? null, lease.leaseMs],
  );
  const token = rows[0]?.token;
  if (token === undefined) return undefined;
  return { leaseName: lease.leaseName, holder: lease.holder, token };
}

/** Moves the lease's end on by leaseMs; false when the grant is no longer the lease's. */
export async function renewLease(db: Queryable, grant: Grant, leaseMs: number): Promise<boolean> {
  const result = await db.query(
    `UPDATE fleet_lease SET renewed_at = clock_timestamp(), lease_until = ${untilSql("$4")}
      WHERE lease_name = $1 AND holder = $2 AND token = $3`,
    [grant.leaseName, grant.holder, grant.token, leaseMs],
  );
  return result.rowCount === 1;
}

/** Lets the lease go now (a graceful stop): the next process that asks takes it at once. */
export async function releaseLease(db: Queryable, grant: Grant): Promise<boolean> {
  const result = await db.query(
    `UPDATE fleet_lease SET lease_until = clock_timestamp(), released_at = clock_timestamp()
      WHERE lease_name = $1 AND holder = $2 AND token = $3`,
    [grant.leaseName, grant.holder, grant.token],
  );
  return result.rowCount === 1;
}

/**
 * Whether `grant` still holds its lease, checked inside the caller's transaction (its last
 * statement before COMMIT): the row is locked FOR SHARE, so a takeover waits for this transaction
 * to end, and a write checked here can never land after another process was granted the lease.
 */
export async function leaseStillHeld(tx: Tx, grant: Grant): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM fleet_lease
      WHERE lease_name = $1 AND holder = $2 AND token = $3 AND lease_until > clock_timestamp()
        FOR SHARE`,
    [grant.leaseName, grant.holder, grant.token],
  );
  return rows.length === 1;
}

interface Row {
  lease_name: string; holder: string; holder_address: string | null; token: bigint;
  acquired_at: Date;
  renewed_at: Date; lease_until: Date; released_at: Date | null; live: boolean;
  previous_holder: string | null; previous_renewed_at: Date | null;
}

/** Every lease of the fleet, by name (for /fleet, `clearline status` and the console). */
export async function listLeases(
  db: Queryable, rowsMax: number = limits.fleet.listRowsMax,
): Promise<LeaseRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT lease_name, holder, holder_address, token, acquired_at, renewed_at, lease_until,
            released_at,
            lease_until > clock_timestamp() AS live, previous_holder, previous_renewed_at
       FROM fleet_lease ORDER BY lease_name LIMIT $1`,
    [rowsMax],
  );
  return rows.map((row) => ({
    leaseName: row.lease_name, holder: row.holder, holderAddress: row.holder_address,
    token: row.token,
    acquiredAt: row.acquired_at, renewedAt: row.renewed_at, leaseUntil: row.lease_until,
    releasedAt: row.released_at, live: row.live, previousHolder: row.previous_holder,
    previousRenewedAt: row.previous_renewed_at,
  }));
}
