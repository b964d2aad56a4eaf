import { limits } from "../config/limits.ts";
import type { Pool, PoolClient } from "./pool.ts";

export type SessionCheckCode =
  | "DB_POOLER_REFUSED_SETTINGS" | "DB_SESSION_SETTINGS_MISSING" | "DB_TRANSACTION_POOLING";

const direct = "Connect to PostgreSQL directly, or through a TCP proxy (HAProxy)";

/** A database connection clearline cannot work through; the message says what to change. */
export class DatabaseSessionError extends Error {
  constructor(readonly code: SessionCheckCode, message: string) {
    super(`${code}: ${message} (docs/operations/scaling.md, "A PgBouncer in front")`);
    this.name = "DatabaseSessionError";
  }
}

/** What createPool sets on every connection (src/db/pool.ts), as pg_settings reports it. */
const expectedSettings: Record<string, string> = {
  plan_cache_mode: "force_generic_plan",
  lock_timeout: String(limits.db.sessionLockTimeoutMs),
  statement_timeout: String(limits.db.statementTimeoutMs),
};

/** pgbouncer's refusal of a startup parameter it does not pass on (08P01 protocol_violation). */
function isRefusedStartupParameter(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /unsupported startup parameter/i.test(text);
}

/**
 * Refuses, at start, a database connection that is not one PostgreSQL session per pooled client
 * (docs/decisions/0073): clearline's pool names its statements (planned once per session), sets
 * its lock and statement timeouts and plan_cache_mode when it connects, and the migration holds a
 * session's advisory lock. Behind PgBouncer in transaction mode each transaction may run on
 * another server session, where none of that holds. Three checks, each with its own code:
 * PgBouncer refused the settings outright (its default); the settings are not in effect (a pooler
 * told to ignore them); two clients share a server session (transaction pooling).
 */
export async function assertSessionConnections(pool: Pool): Promise<void> {
  let first: PoolClient;
  try {
    first = await pool.connect();
  } catch (error) {
    if (!isRefusedStartupParameter(error)) throw error;
    const refusal = error instanceof Error ? error.message : String(error);
    throw new DatabaseSessionError("DB_POOLER_REFUSED_SETTINGS", "the database connection refused "
      + `the session settings clearline sends when it connects (${refusal}): a connection pooler `
      + `such as PgBouncer is in front. ${direct}`);
  }
  try {
    await assertSettingsInEffect(first);
    await assertOwnSession(pool, first);
  } finally {
    first.release();
  }
}

async function assertSettingsInEffect(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ name: string; setting: string }>(
    "SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])",
    [Object.keys(expectedSettings)]);
  const actual = new Map(rows.map((row) => [row.name, row.setting]));
  const missing = Object.entries(expectedSettings)
    .filter(([name, value]) => actual.get(name) !== value);
  if (missing.length === 0) return;
  const listed = missing
    .map(([name, value]) => `${name} is ${actual.get(name) ?? "unknown"}, not ${value}`).join("; ");
  throw new DatabaseSessionError("DB_SESSION_SETTINGS_MISSING", "the session settings clearline "
    + `sets when it connects are not in effect (${listed}): a connection pooler ignores them. `
    + direct);
}

/**
 * Two clients of the pool must be two server sessions, and a client keeps its session between
 * transactions. Behind transaction pooling the second client, opening a transaction, is handed the
 * session the first just gave back (PgBouncer reuses the last released one), or the first comes
 * back on another session afterwards.
 */
async function assertOwnSession(pool: Pool, first: PoolClient): Promise<void> {
  const pidOf = async (client: PoolClient) =>
    (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
  const before = await pidOf(first);
  const second = await pool.connect();
  let during: number | undefined;
  let after: number | undefined;
  try {
    await second.query("BEGIN");
    during = await pidOf(second);
    after = await pidOf(first);
    await second.query("ROLLBACK");
  } finally {
    second.release();
  }
  if (during !== before && after === before) return;
  throw new DatabaseSessionError("DB_TRANSACTION_POOLING", "two clients of clearline's pool ran on "
    + `one PostgreSQL session (server process ${before}, then ${during} and ${after}): `
    + "a connection "
    + "pooler in transaction mode (PgBouncer pool_mode = transaction) is in front, where named "
    + "statements, session settings and the migration's advisory lock do not hold. Connect to "
    + "PostgreSQL directly, through a TCP proxy (HAProxy), or through PgBouncer in session mode "
    + "with the settings set on the role");
}
