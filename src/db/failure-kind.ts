import { CommitOutcomeUnknown } from "./commit-outcome.ts";
import { sqlState } from "./transaction.ts";

/**
 * COMMIT was sent and its answer is unknown (a lost connection, a missed deadline, the synchronous
 * replication warning): answered 503 outcome_unknown or 96, never "nothing was stored" (0078).
 */
export function isCommitOutcomeUnknown(error: unknown): error is CommitOutcomeUnknown {
  return error instanceof CommitOutcomeUnknown;
}

const goneMessages = /timeout exceeded when trying to connect|Connection terminated|not queryable/i;

/** SQLSTATE classes and client errors that mean "the database is not there right now". */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  // 57P01 admin shutdown, 57P02 crash of another backend (a primary killed under us), 57P03
  // starting up; a client whose socket died refuses further queries ("not queryable").
  return code.startsWith("08") || ["57P01", "57P02", "57P03"].includes(code)
    || code === "ECONNREFUSED" || code === "ECONNRESET" || code === "EPIPE"
    || (error instanceof Error && goneMessages.test(error.message));
}

/**
 * True when the same work, sent again unchanged, can succeed: a conflict with another
 * transaction (serialization failure, deadlock, lock or statement timeout) or a momentary lack of
 * resources. Anything else (a data exception such as text PostgreSQL cannot store, a constraint
 * or a programming error) fails the same way on every retry, so nobody should be told to retry.
 */
export function isTransientDatabaseFailure(error: unknown): boolean {
  const state = sqlState(error);
  if (state === undefined) return false;
  return state.startsWith("40") || state.startsWith("53") || state === "55P03" || state === "57014";
}
