// Codes of the embedded database's lifecycle: thrown at start-up (an infrastructure failure,
// surfaced to the operator with the fix), never returned as input findings.
export const dbErrorCodes = {
  DB_EMBEDDED_DIRECTORY_UNREACHABLE: "The embedded PostgreSQL runs as an unprivileged user (as root: `postgres`) that cannot reach its data directory; choose a CLEARLINE_HOME it can reach, or let it traverse the directory named.",
  DB_EMBEDDED_START_FAILED: "The embedded PostgreSQL exited while starting; the message carries its last log lines.",
  DB_EMBEDDED_IN_USE: "Another live clearline process runs the embedded PostgreSQL of this CLEARLINE_HOME and it does not answer; stop that process or wait for it.",
} as const satisfies Record<string, string>;
