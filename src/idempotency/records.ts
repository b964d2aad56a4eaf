import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import { commitAfter, sqlState, type Tx } from "../db/transaction.ts";
import { dedupDecisions } from "../observability/metrics.ts";
import type { Canonical } from "./request-digest.ts";

export interface IdempotencyScope {
  tenantId: string;
  endpoint: string;   // "POST /v1/payments"
  key: string;
}

export interface StoredHttpResponse {
  status: number;
  body: string;       // exact bytes, replayed as they were sent
  effectRef: string | null;
}

export type IdempotencyRecord =
  | { state: "completed"; digest: string; canonical: Canonical; response: StoredHttpResponse }
  | { state: "in_progress"; digest: string; canonical: Canonical; leaseExpired: boolean; attempt: number };

export interface RecordRow {
  state: "completed" | "in_progress";
  request_digest: string;
  request_canonical: Canonical;
  response_status: number | null;
  response_body: string | null;
  effect_ref: string | null;
  lease_expired: boolean;
  attempt: number;
}

/** The columns of a record as `toRecord` reads them; `lease_expired` by the server's clock. */
const RECORD_COLUMNS = `state, request_digest, request_canonical, response_status, response_body, effect_ref,
         lease_until < now() AS lease_expired, attempt`;

export const SELECT_RECORD = `
  SELECT ${RECORD_COLUMNS}
    FROM idempotency_record WHERE tenant_id = $1 AND endpoint = $2 AND idem_key = $3`;

export function toRecord(row: RecordRow): IdempotencyRecord {
  if (row.state === "completed") {
    return {
      state: "completed", digest: row.request_digest, canonical: row.request_canonical,
      response: { status: row.response_status ?? 500, body: row.response_body ?? "", effectRef: row.effect_ref },
    };
  }
  return { state: "in_progress", digest: row.request_digest, canonical: row.request_canonical, leaseExpired: row.lease_expired, attempt: row.attempt };
}

/** The replay fast path: a plain SELECT, no lock, no write (far cheaper than a no-op upsert). */
export async function findRecord(db: Queryable, scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
  const { rows } = await db.query<RecordRow>(SELECT_RECORD, [scope.tenantId, scope.endpoint, scope.key]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * The replay fast path in ONE round trip, for one lookup or for a batch of them (the concurrent
 * requests of one tenant and endpoint, src/idempotency/repeat-screen.ts): each key's record, and,
 * when it answers the request (completed, or still running under its lease), the dedup_event
 * audit row of that answer, written by the same statement with synchronous_commit off
 * (docs/decisions/0005-cheap-audit-writes.md: an audit row may be lost in the last moments before
 * a crash, never a posting or a dedup mark). The reason is the answer the caller gets: another
 * request under this key (key_reuse, 422), still running (in_progress, 409), or the stored
 * response (replayed). A record whose lease expired is not answered here (the caller claims it
 * over) and leaves no row. Each lookup is its own element, so the same key asked twice in one
 * batch is answered, and audited, twice. The records are found by one index probe per key
 * (docs/decisions/0052). dedup_event is otherwise written by src/dedup/dedup-event.ts; this
 * statement is the one other writer, for the round trip it saves.
 */
const SELECT_RECORDS_AUDITING_REPEATS = `
  WITH r AS (
    SELECT l.ord, l.idem_key, l.digest, rec.*
      FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS l(idem_key, digest, ord)
      CROSS JOIN LATERAL (
        SELECT ${RECORD_COLUMNS}
          FROM idempotency_record WHERE tenant_id = $1 AND endpoint = $2 AND idem_key = l.idem_key OFFSET 0) rec),
  relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
  audit AS (
    INSERT INTO dedup_event (tenant_id, channel, scope, dedup_key, reason, original_ref)
    SELECT $1, 'http', $2, r.idem_key,
           CASE WHEN r.request_digest <> r.digest THEN 'key_reuse' WHEN r.state = 'in_progress' THEN 'in_progress' ELSE 'replayed' END,
           CASE WHEN r.state = 'completed' THEN r.effect_ref END
      FROM r, relaxed
     WHERE r.state = 'completed' OR NOT r.lease_expired
  )
  SELECT ord, state, request_digest, request_canonical, response_status, response_body, effect_ref, lease_expired, attempt FROM r`;

export function repeatReasonOf(record: IdempotencyRecord, digest: string): "key_reuse" | "in_progress" | "replayed" {
  return record.digest !== digest ? "key_reuse" : record.state === "in_progress" ? "in_progress" : "replayed";
}

/** One request's key and the digest of its canonical body, as the repeat screen looks them up. */
export interface RepeatLookup {
  key: string;
  digest: string;
}

/**
 * `findRecord` for each request it answers, with the audit row of each answer written in the same
 * statement; the records in the order of `lookups` (undefined: no record under that key).
 */
export async function findRecordsAuditingRepeats(db: Queryable, tenantId: string, endpoint: string, lookups: readonly RepeatLookup[]): Promise<Array<IdempotencyRecord | undefined>> {
  const { rows } = await db.query<RecordRow & { ord: bigint }>(
    { name: "clearline.idempotency.find-auditing-repeats", text: SELECT_RECORDS_AUDITING_REPEATS },
    [tenantId, endpoint, lookups.map((l) => l.key), lookups.map((l) => l.digest)],
  );
  const records: Array<IdempotencyRecord | undefined> = new Array<IdempotencyRecord | undefined>(lookups.length).fill(undefined);
  for (const row of rows) {
    const index = Number(row.ord) - 1;
    const record = toRecord(row);
    records[index] = record;
    if (record.state === "completed" || !record.leaseExpired) dedupDecisions.inc({ channel: "http", reason: repeatReasonOf(record, (lookups[index] as RepeatLookup).digest) });
  }
  return records;
}

/** `findRecordsAuditingRepeats` for one request. */
export async function findRecordAuditingRepeat(db: Queryable, scope: IdempotencyScope, digest: string): Promise<IdempotencyRecord | undefined> {
  return (await findRecordsAuditingRepeats(db, scope.tenantId, scope.endpoint, [{ key: scope.key, digest }]))[0];
}

export type Claim =
  | { kind: "claimed"; attempt: number }        // attempt 1: first; > 1: takeover of an expired lease
  | { kind: "held"; record: IdempotencyRecord } // completed, still running, or another request's key
  | { kind: "busy" };                           // another transaction holds the key right now

/**
 * Claims the key inside the caller's transaction. A takeover happens only for an attempt whose
 * lease expired AND whose request is the same; the attempt counter it bumps is the fencing token
 * that `complete` checks. A concurrent duplicate would wait on the unique index until the first
 * transaction ends; lock_timeout turns that wait into `busy` (409) instead of a held connection.
 * After `busy` the transaction is aborted and must be rolled back. The caller opens the
 * transaction with `claimTransactionSettings` (saves a round trip); the claim statement itself
 * puts lock_timeout back, so later waits (a customer's row lock) are not cut short.
 */
export const claimTransactionSettings = { lock_timeout: limits.http.claimLockTimeoutMs } as const;

/**
 * The select list item of a claim statement that puts lock_timeout back to the session's value
 * (the pool sets it at connect) once the claim is done: it sits in the projection of an
 * aggregate over the claim's rows, so it runs after the last row was claimed, every wait of the
 * claim still bounded. It saves the separate RESET round trip (docs/decisions/0051). Parameter
 * $8 is SESSION_LOCK_TIMEOUT.
 */
export const RESTORE_LOCK_TIMEOUT_SQL = "set_config('lock_timeout', $8, true) AS lock_timeout";
export const SESSION_LOCK_TIMEOUT = String(limits.db.sessionLockTimeoutMs);

export async function claim(tx: Tx, scope: IdempotencyScope, digest: string, canonical: Canonical): Promise<Claim> {
  let rows: Array<{ attempt: number | null }>;
  try {
    ({ rows } = await tx.query<{ attempt: number | null }>(
      {
        name: "clearline.idempotency.claim",
        text: `WITH claimed AS (
                 INSERT INTO idempotency_record AS r
                   (tenant_id, endpoint, idem_key, request_digest, request_canonical, state, lease_until, expires_at)
                 VALUES ($1, $2, $3, $4, $5, 'in_progress', now() + make_interval(secs => $6 / 1000.0), now() + make_interval(secs => $7 / 1000.0))
                 ON CONFLICT (tenant_id, endpoint, idem_key) DO UPDATE
                    SET attempt = r.attempt + 1, lease_until = excluded.lease_until
                  WHERE r.state = 'in_progress' AND r.lease_until < now() AND r.request_digest = excluded.request_digest
                 RETURNING attempt)
               SELECT max(attempt) AS attempt, ${RESTORE_LOCK_TIMEOUT_SQL} FROM claimed`,
      },
      [scope.tenantId, scope.endpoint, scope.key, digest, JSON.stringify(canonical), limits.http.idempotencyLeaseMs, limits.http.idempotencyWindowMs, SESSION_LOCK_TIMEOUT],
    ));
  } catch (error) {
    if (sqlState(error) === "55P03") return { kind: "busy" }; // lock_not_available
    throw error;
  }
  const attempt = rows[0]?.attempt;
  if (attempt !== null && attempt !== undefined) return { kind: "claimed", attempt };
  const record = await findRecord(tx, scope);
  // The conflicting row was there a moment ago and only the expiry job deletes, long after.
  if (!record) throw new Error(`idempotency record ${scope.endpoint} ${scope.key} vanished during its claim`);
  return { kind: "held", record };
}

/**
 * Completes the claimed attempt with its response, in the same transaction as the effect. Returns
 * false when the attempt was fenced off (another request took the key over after this attempt's
 * lease expired): the caller must then roll back, so the stale effect never commits.
 */
export async function complete(
  tx: Tx, scope: IdempotencyScope, attempt: number, response: StoredHttpResponse,
): Promise<boolean> {
  const result = await tx.query(
    `UPDATE idempotency_record
        SET state = 'completed', response_status = $5, response_body = $6, effect_ref = $7, completed_at = now(), lease_until = now()
      WHERE tenant_id = $1 AND endpoint = $2 AND idem_key = $3 AND attempt = $4 AND state = 'in_progress'`,
    [scope.tenantId, scope.endpoint, scope.key, attempt, response.status, response.body, response.effectRef],
  );
  return result.rowCount === 1;
}

/**
 * `complete`, sent together with COMMIT (one round trip; docs/decisions/0051). A fenced-off
 * attempt makes the statement raise, so nothing of the transaction commits, and this returns
 * false; true when the attempt completed and the transaction committed. The caller's work must
 * return right after, without another statement.
 */
export async function completeAndCommit(
  tx: Tx, scope: IdempotencyScope, attempt: number, response: StoredHttpResponse,
): Promise<boolean> {
  try {
    await commitAfter(tx, () => tx.query(
      {
        name: "clearline.idempotency.complete-and-check",
        text: `WITH done AS (
                 UPDATE idempotency_record
                    SET state = 'completed', response_status = $5, response_body = $6, effect_ref = $7, completed_at = now(), lease_until = now()
                  WHERE tenant_id = $1 AND endpoint = $2 AND idem_key = $3 AND attempt = $4 AND state = 'in_progress'
                 RETURNING 1)
               SELECT expect_row_count((SELECT count(*) FROM done), 1, $8) AS completed`,
      },
      [scope.tenantId, scope.endpoint, scope.key, attempt, response.status, response.body, response.effectRef, FENCED_OFF_CHECK],
    ));
  } catch (error) {
    if (isFencedOff(error)) return false;
    throw error;
  }
  return true;
}

/** What a completion statement names its fencing check (the third argument of expect_row_count). */
export const FENCED_OFF_CHECK = "idempotency attempts completed";

/** A completion statement refused: an attempt it had to complete was taken over (its lease had expired). */
export function isFencedOff(error: unknown): boolean {
  return sqlState(error) === "CL001" && error instanceof Error && error.message.startsWith(`${FENCED_OFF_CHECK}:`);
}

/**
 * Deletes expired records, oldest first, at most `rowsMax` per call, so the job never holds long
 * locks or writes a burst of WAL. Completed records expire after the window; an in_progress one
 * only after its lease is also a whole window old (its outcome is long decided by then).
 */
export async function deleteExpired(db: Queryable, rowsMax: number = limits.http.expiryBatchRowsMax): Promise<number> {
  const result = await db.query(
    `DELETE FROM idempotency_record r
      USING (SELECT tenant_id, endpoint, idem_key FROM idempotency_record
              WHERE expires_at < now() AND (state = 'completed' OR lease_until < now() - make_interval(secs => $2 / 1000.0))
              ORDER BY expires_at LIMIT $1) old
      WHERE r.tenant_id = old.tenant_id AND r.endpoint = old.endpoint AND r.idem_key = old.idem_key`,
    [rowsMax, limits.http.idempotencyWindowMs],
  );
  return result.rowCount ?? 0;
}

/** Age in seconds of the oldest in_progress record: the earliest sign of trouble downstream. */
export async function oldestInProgressAgeSeconds(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ age: string | null }>(
    "SELECT extract(epoch FROM now() - min(created_at))::text AS age FROM idempotency_record WHERE state = 'in_progress'",
  );
  const age = rows[0]?.age;
  return age ? Math.max(0, Math.round(Number(age))) : 0;
}
