import pg from "pg";
import { limits } from "../config/limits.ts";

/** Why a COMMIT's outcome is unknown (docs/decisions/0078). */
export type CommitUnknownReason =
  | "connection_lost"   // COMMIT was handed to the driver, then the connection died
  | "deadline"          // no answer within limits.db.commitWaitMs (a standby that does not flush)
  | "not_replicated";   // success with a warning: committed locally, maybe not on the standby

/**
 * A transaction whose COMMIT was sent and whose outcome clearline cannot know: it may be stored,
 * it may not. Never answered "nothing was stored": HTTP 503 outcome_unknown, ISO 8583 96, and the
 * retry with the same key finds out (docs/decisions/0078).
 */
export class CommitOutcomeUnknown extends Error {
  readonly code = "DB_COMMIT_OUTCOME_UNKNOWN";
  constructor(readonly reason: CommitUnknownReason, cause?: unknown) {
    const why = cause instanceof Error ? `: ${cause.message}` : "";
    super(`the outcome of COMMIT is unknown (${reason})${why}`, { cause });
    this.name = "CommitOutcomeUnknown";
  }
}

/**
 * True when an error that answered a COMMIT (or the statement sent with it) says for certain that
 * nothing was committed: PostgreSQL itself refused (an ErrorResponse), with a SQLSTATE outside the
 * classes of a lost or ended session (08 connection, 57 operator intervention, 58 system, XX
 * internal). A client-side error (a socket reset, "Connection terminated unexpectedly") is not an
 * answer: unknown.
 */
export function refusedForCertain(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return false;
  return !["08", "57", "58", "XX"].includes((error.code ?? "XX").slice(0, 2));
}

/** What a notice of PostgreSQL carries that matters here. */
interface Notice {
  message?: string;
  detail?: string;
}

/** Clients whose last COMMIT was answered with the synchronous replication warning. */
const notReplicated = new WeakSet<object>();

/**
 * PostgreSQL's warning when a commit's wait for the synchronous standby was cancelled: "canceling
 * wait for synchronous replication ...", detail "The transaction has already committed locally,
 * but might not have been replicated to the standby." (syncrep.c). Both texts are matched, in case
 * one of them is translated.
 */
function isNotReplicatedWarning(notice: Notice): boolean {
  return /synchronous replication/i.test(notice.message ?? "")
    || /committed locally/i.test(notice.detail ?? "");
}

/** Watches a new client's notices for the synchronous replication warning (createPool does it). */
export function watchCommitWarnings(client: pg.Client): void {
  client.on("notice", (notice: Notice) => {
    if (isNotReplicatedWarning(notice)) notReplicated.add(client);
  });
}

/**
 * Sends COMMIT (through `send`, which may send a statement before it) and waits for its answer
 * within the commit deadline. Succeeds only on a plain success; a COMMIT with the replication
 * warning, a lost connection or a missed deadline throws CommitOutcomeUnknown, and a missed
 * deadline destroys the connection (the backend keeps waiting for its standby and commits once one
 * flushes; clearline never cancels it, which would commit it locally only). A refusal PostgreSQL
 * answered (a constraint, a raise in the last statement) is thrown as it is.
 */
export async function sendCommit<T>(client: pg.PoolClient, send: () => Promise<T>): Promise<T> {
  notReplicated.delete(client);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CommitOutcomeUnknown("deadline")), limits.db.commitWaitMs);
  });
  const answered = send();
  try {
    const result = await Promise.race([answered, deadline]);
    if (notReplicated.delete(client)) throw new CommitOutcomeUnknown("not_replicated");
    return result;
  } catch (error) {
    if (error instanceof CommitOutcomeUnknown) {
      if (error.reason === "deadline") {
        answered.catch(() => undefined);
        destroyConnection(client);
      }
      throw error;
    }
    if (refusedForCertain(error)) throw error;
    throw new CommitOutcomeUnknown("connection_lost", error);
  } finally {
    clearTimeout(timer);
  }
}

/** Closes a client's socket at once, whatever it waits for (pg's end() would wait for it). */
function destroyConnection(client: pg.PoolClient): void {
  const connection = (client as unknown as { connection?: { stream?: { destroy(): void } } })
    .connection;
  connection?.stream?.destroy();
}
