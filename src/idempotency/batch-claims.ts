import { limits } from "../config/limits.ts";
import { StatementParams } from "../db/statement-parts.ts";
import type { Tx } from "../db/transaction.ts";
import type { Canonical } from "./request-digest.ts";
import { assert } from "../assert.ts";
import {
  RESTORE_LOCK_TIMEOUT_SQL, SESSION_LOCK_TIMEOUT, toRecord, type IdempotencyRecord, type RecordRow,
  type StoredHttpResponse,
} from "./records.ts";

/**
 * The idempotency claims and completions of a group-committed batch of requests (one tenant, one
 * endpoint; docs/decisions/0043): the same rows and the same rules as `claim` and `complete` in
 * records.ts, one statement for the whole batch instead of one per request. A batch never holds a
 * key twice (the batching writer keeps the later one for the next batch).
 */
export interface BatchClaim {
  key: string;
  digest: string;
  canonical: Canonical;
}

/**
 * Claims every key in one statement, in key order (two transactions claiming overlapping keys
 * lock the index entries in one order). Returns the attempt of each key it claimed; a key not in
 * the map is held (completed, running, or another request's). A key another open transaction
 * holds makes the statement wait up to the transaction's lock_timeout and then THROW (55P03): the
 * whole batch rolls back and its callers run alone, where that key alone gets its 409.
 */
export async function claimBatch(tx: Tx, tenantId: string, endpoint: string, claims: readonly BatchClaim[]): Promise<Map<string, number>> {
  const sorted = [...claims].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const { rows } = await tx.query<{ keys: string[]; attempts: number[] }>(
    {
      name: "clearline.idempotency.claim-batch",
      text: `WITH claimed AS (
               INSERT INTO idempotency_record AS r
                 (tenant_id, endpoint, idem_key, request_digest, request_canonical, state, lease_until, expires_at)
               SELECT $1, $2, c.idem_key, c.digest, c.canonical::jsonb, 'in_progress',
                      now() + make_interval(secs => $6 / 1000.0), now() + make_interval(secs => $7 / 1000.0)
                 FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS c(idem_key, digest, canonical, n)
                ORDER BY c.n
               ON CONFLICT (tenant_id, endpoint, idem_key) DO UPDATE
                  SET attempt = r.attempt + 1, lease_until = excluded.lease_until
                WHERE r.state = 'in_progress' AND r.lease_until < now() AND r.request_digest = excluded.request_digest
               RETURNING idem_key, attempt)
             SELECT coalesce(array_agg(idem_key), '{}') AS keys, coalesce(array_agg(attempt), '{}') AS attempts, ${RESTORE_LOCK_TIMEOUT_SQL}
               FROM claimed`,
    },
    [tenantId, endpoint, sorted.map((c) => c.key), sorted.map((c) => c.digest), sorted.map((c) => JSON.stringify(c.canonical)),
      limits.http.idempotencyLeaseMs, limits.http.idempotencyWindowMs, SESSION_LOCK_TIMEOUT],
  );
  // As after a single claim, the statement put lock_timeout back: later waits (a debtor's row lock) are not cut short.
  const { keys, attempts } = rows[0] as { keys: string[]; attempts: number[] };
  assert(keys.length === attempts.length, "a claimed key has one attempt");
  return new Map(keys.map((key, i) => [key, attempts[i] as number]));
}

/** The records of keys the batch's claim found held, in one statement. */
export async function findBatchRecords(tx: Tx, tenantId: string, endpoint: string, keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
  if (keys.length === 0) return new Map();
  const { rows } = await tx.query<RecordRow & { idem_key: string }>(
    `SELECT idem_key, state, request_digest, request_canonical, response_status, response_body, effect_ref,
            lease_until < now() AS lease_expired, attempt
       FROM idempotency_record WHERE tenant_id = $1 AND endpoint = $2 AND idem_key = ANY($3::text[])`,
    [tenantId, endpoint, keys],
  );
  return new Map(rows.map((row) => [row.idem_key, toRecord(row)]));
}

export interface BatchCompletion {
  key: string;
  attempt: number;
  response: StoredHttpResponse;
}

/**
 * The completions of the claimed attempts with their responses, as a part of a larger statement
 * (a data-modifying CTE body returning one row per completed attempt; src/db/statement-parts.ts).
 * Fewer rows than `completions` means an attempt was fenced off (taken over after its lease
 * expired): the statement that holds it must then refuse (expect_row_count, `isFencedOff`), so the
 * whole batch rolls back, as `complete` says for one.
 */
export function completeBatchPart(params: StatementParams, tenantId: string, endpoint: string, completions: readonly BatchCompletion[]): string {
  // The tenant and endpoint come in arrays, like the keys, not as constants: the only index
  // condition the planner is then given is the whole primary key of each completion, so it probes
  // one row per completion. Given `r.tenant_id = $n` as a constant, a planner without statistics
  // (a new table, autovacuum off) scanned every record of the endpoint for every batch
  // (docs/decisions/0052).
  const column = <T>(value: T) => completions.map(() => value);
  return `UPDATE idempotency_record r
             SET state = 'completed', response_status = c.status, response_body = c.body, effect_ref = c.effect_ref,
                 completed_at = now(), lease_until = now()
            FROM unnest(${params.add(column(tenantId), "text[]")}, ${params.add(column(endpoint), "text[]")},
                        ${params.add(completions.map((c) => c.key), "text[]")}, ${params.add(completions.map((c) => c.attempt), "int[]")},
                        ${params.add(completions.map((c) => c.response.status), "int[]")}, ${params.add(completions.map((c) => c.response.body), "text[]")},
                        ${params.add(completions.map((c) => c.response.effectRef), "text[]")}) AS c(tenant_id, endpoint, idem_key, attempt, status, body, effect_ref)
           WHERE r.tenant_id = c.tenant_id AND r.endpoint = c.endpoint AND r.idem_key = c.idem_key
             AND r.attempt = c.attempt AND r.state = 'in_progress'
          RETURNING r.idem_key`;
}
