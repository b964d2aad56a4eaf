// Codes of the database's start-up (the embedded server's lifecycle, the connection's checks):
// thrown at start-up (an infrastructure failure, surfaced to the operator with the fix), never
// returned as input findings.
export const dbErrorCodes = {
  DB_POOLER_REFUSED_SETTINGS: "The connection refused the session settings clearline sends when it connects (\"unsupported startup parameter\"): a connection pooler such as PgBouncer is in front. Connect to PostgreSQL directly or through a TCP proxy (docs/decisions/0073).",
  DB_SESSION_SETTINGS_MISSING: "The session settings clearline sets when it connects (plan_cache_mode, lock_timeout, statement_timeout) are not in effect: a pooler ignores them. Connect directly, or set them on the role (docs/decisions/0073).",
  DB_TRANSACTION_POOLING: "Two clients of clearline's pool ran on one PostgreSQL session: a pooler in transaction mode (PgBouncer pool_mode = transaction) is in front, where named statements, session settings and the migration's advisory lock do not hold. clearline refuses to start (docs/decisions/0073).",
  DB_EMBEDDED_DIRECTORY_UNREACHABLE: "The embedded PostgreSQL runs as an unprivileged user (as root: `postgres`) that cannot reach its data directory; choose a CLEARLINE_HOME it can reach, or let it traverse the directory named.",
  DB_EMBEDDED_SETTING_INVALID:
    "A CLEARLINE_PG_* setting of the embedded PostgreSQL is out of bounds; the message names it.",
  DB_EMBEDDED_START_FAILED: "The embedded PostgreSQL exited while starting; the message carries its last log lines.",
  DB_EMBEDDED_RESTART_FAILED: "The embedded PostgreSQL that `clearline serve` runs died and did not"
    + " start again within its bound (5 attempts with a backoff); serve exits with status 1 and the"
    + " message quotes the last failure. Look at CLEARLINE_HOME/pgdata and its server's log, then"
    + " start serve again (docs/operations/database-loss.md).",
  DB_EMBEDDED_IN_USE: "Another live clearline process runs the embedded PostgreSQL of this CLEARLINE_HOME and it does not answer; stop that process or wait for it.",
} as const satisfies Record<string, string>;
