import pg from "pg";
import { limits } from "../config/limits.ts";
import { watchCommitWarnings } from "./commit-outcome.ts";

/**
 * int8 (bigint, counts, sums of bigint) comes back as a JS bigint and numeric as a string:
 * a JS number silently loses precision above 2^53, and money must never pass through one.
 * The parsers are set on a private type registry, not pg's global one, so that no other user of
 * the pg module in this process is surprised.
 */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

const typeRegistry = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    if (oid === NUMERIC_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format ?? "text");
  },
};

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.PoolClient, "query">;

export function createPool(connectionString: string, options: { max?: number; applicationName?: string } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? limits.db.poolConnectionsMax,
    connectionTimeoutMillis: limits.db.connectTimeoutMs,
    statement_timeout: limits.db.statementTimeoutMs,
    // A known session value, not the server's default: a claim puts it back itself (docs/decisions/0051).
    // A named (prepared) statement is planned once per connection: its lookups probe each key
    // (docs/decisions/0052), so its plan does not depend on the values; left to choose, PostgreSQL
    // re-planned most of them on every call, because a plan for an unknown number of keys looks
    // dearer than one for the two it was given. Unnamed statements are planned per call as before.
    options: `-c lock_timeout=${limits.db.sessionLockTimeoutMs} -c plan_cache_mode=force_generic_plan`,
    // Statements sent without awaiting the one before go out together (BEGIN with the first
    // statement, the last statement with COMMIT; docs/decisions/0051). Awaited statements behave
    // as without it. No cursors or COPY streams on these clients: pg refuses them in this mode.
    pipeline: true,
    idle_in_transaction_session_timeout: limits.db.idleInTransactionTimeoutMs,
    application_name: options.applicationName ?? "clearline",
    types: typeRegistry,
    // A primary that vanished without a reset (a partition, a dead host) is found by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: limits.db.keepAliveInitialDelayMs,
  });
  // An idle client that loses its connection (server restart) must not crash the process; the
  // pool discards it and the next checkout opens a new one.
  pool.on("error", () => undefined);
  // pg-pool takes that listener off a client it hands out, and pg emits "error" on a client whose
  // connection breaks even while a query of it is waiting (the query rejects too): without a
  // listener of the client's own, a reset mid-transaction or a failover stopped the process
  // (decisions 0078, 0086). The query's rejection carries the error; a broken client is not
  // queryable and release() discards it.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
    watchCommitWarnings(client);
  });
  return pool;
}
