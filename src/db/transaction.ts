import { limits } from "../config/limits.ts";
import { CommitOutcomeUnknown, sendCommit } from "./commit-outcome.ts";
import { sentTogether } from "./pipeline.ts";
import type { Pool, PoolClient, Queryable } from "./pool.ts";

declare const inTransaction: unique symbol;
/**
 * A client inside an open transaction. Functions that must run inside the caller's transaction
 * (a posting and its dedup mark commit together) take a Tx, so the compiler refuses a bare pool,
 * whose every statement would commit on its own.
 */
export type Tx = Queryable & { readonly [inTransaction]: true };

/** SQLSTATEs after which the whole transaction may safely be run again. */
const RETRYABLE_SQLSTATES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);

export interface TransactionOptions {
  isolation?: "read committed" | "repeatable read" | "serializable";
  /** Settings for this transaction only, sent with BEGIN in the same round trip (constant values only). */
  localSettings?: Record<string, string | number>;
  retriesMax?: number;
}

function beginSql(options: TransactionOptions): string {
  let sql = options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : "BEGIN";
  for (const [name, value] of Object.entries(options.localSettings ?? {})) {
    if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(String(value))) throw new Error(`refusing setting ${name}=${value}`);
    sql += `; SET LOCAL ${name} = ${typeof value === "number" ? value : `'${value}'`}`;
  }
  return sql;
}

export function sqlState(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/** Transactions that `commitAfter` committed: withTransaction must not send COMMIT again. */
const committedEarly = new WeakSet<object>();

/**
 * Runs `work` in one transaction and commits it; rolls back on any throw. Retries the whole
 * transaction (a bounded number of times, with a doubling backoff) only on serialization
 * failures and deadlocks, where PostgreSQL guarantees nothing of the attempt was kept.
 * Every module that writes takes the client handed to `work`, so dedup marks and ledger
 * postings commit together.
 *
 * On a pipelining client (every pool of createPool) BEGIN is not awaited alone: it goes out with
 * the work's first statement, one round trip (docs/decisions/0051). BEGIN cannot fail on a live
 * connection; if its SET LOCAL did, the transaction is aborted and that first statement fails.
 */
export async function withTransaction<T>(pool: Pool, work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const retriesMax = options.retriesMax ?? limits.db.transactionRetriesMax;
  for (let attempt = 0; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    try {
      const begun = client.query(beginSql(options));
      if (!client.pipeline) await begun;
      const result = await settledAfter(begun, work(client as unknown as Tx));
      if (!committedEarly.delete(client)) await sendCommit(client, () => client.query("COMMIT"));
      return result;
    } catch (error) {
      // Work that threw after commitAfter committed: nothing to undo, and it must not run again.
      if (committedEarly.delete(client)) throw error;
      // COMMIT was sent and its outcome is unknown: nothing to roll back, never run again (0078).
      if (error instanceof CommitOutcomeUnknown) {
        broken = true;
        throw error;
      }
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true; // the connection is gone; do not return it to the pool
      }
      const state = sqlState(error);
      if (state && RETRYABLE_SQLSTATES.has(state) && attempt < retriesMax) {
        await new Promise((resolve) => setTimeout(resolve, limits.db.transactionRetryBackoffMs * 2 ** attempt));
        continue;
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/** `work`'s result once `before` (sent ahead of it) has also settled; the first failure wins, neither is left unobserved. */
async function settledAfter<B, T>(before: Promise<B>, work: Promise<T>): Promise<T> {
  const [first, second] = await Promise.allSettled([before, work]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
  return second.value;
}

/**
 * The last statement of a `withTransaction` work, sent together with COMMIT (one round trip on a
 * pipelining client; docs/decisions/0051). Whatever the statement must refuse, it refuses by
 * raising inside PostgreSQL (the caller cannot look at its result first): a failed statement
 * leaves the transaction aborted, and PostgreSQL answers that COMMIT with a rollback. The work
 * must return right after; withTransaction then sends no COMMIT of its own.
 */
export async function commitAfter<T>(tx: Tx, statement: () => Promise<T>): Promise<T> {
  const client = tx as unknown as PoolClient;
  // A failed statement's error wins: the COMMIT behind it was answered with a rollback.
  // A lost connection or the replication warning makes the outcome unknown (0078).
  const [result, commit] = await sendCommit(client,
    () => sentTogether(tx, statement, () => client.query("COMMIT")));
  // A COMMIT PostgreSQL turned into ROLLBACK (the transaction was already aborted) is no commit.
  if (commit.command !== "COMMIT") throw new Error(`COMMIT answered ${commit.command}: the transaction was aborted before its last statement`);
  committedEarly.add(client);
  return result;
}

/** A transaction held open across awaits by the caller (streams, tests); commit or roll back. */
export async function openTransaction(pool: Pool): Promise<{ tx: Tx; commit(): Promise<void>; rollback(): Promise<void> }> {
  const client: PoolClient = await pool.connect();
  await client.query("BEGIN");
  let done = false;
  const finish = async (sql: "COMMIT" | "ROLLBACK") => {
    if (done) return;
    done = true;
    try {
      if (sql === "COMMIT") await sendCommit(client, () => client.query(sql));
      else await client.query(sql);
      client.release();
    } catch (error) {
      client.release(true);
      throw error;
    }
  };
  return { tx: client as unknown as Tx, commit: () => finish("COMMIT"), rollback: () => finish("ROLLBACK") };
}
