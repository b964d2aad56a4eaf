import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEventsCheaply } from "../dedup/dedup-event.ts";
import { parseIdempotencyKey, type KeyParse } from "../idempotency/idempotency-key.ts";
import { claim, claimTransactionSettings, completeAndCommit, repeatReasonOf, type IdempotencyRecord, type IdempotencyScope } from "../idempotency/records.ts";
import { repeatScreenOf } from "../idempotency/repeat-screen.ts";
import { differingFields, requestDigest, type Canonical } from "../idempotency/request-digest.ts";
import { mutatingRequests } from "../observability/metrics.ts";
import { faultPoint } from "./fault-points.ts";
import { problemReply, type Reply } from "./reply.ts";

export interface IdempotentCall {
  pool: Pool;
  tenantId: string;
  endpoint: string;                       // "POST /v1/payments"
  idempotencyKeyHeader: string | string[] | undefined;
  canonical: Canonical;                   // the validated request, normalized
  effect: (tx: Tx) => Promise<Reply>;     // the business effect; runs at most once per key
}

export interface IdempotentReply extends Reply {
  replayed: boolean;
  retryAfterSeconds?: number;
}

class FencedOff extends Error {}

/** Parses a mutating request's Idempotency-Key and counts whether it carried one (the share missing is a metric). */
export function idempotencyKeyOf(endpoint: string, header: string | string[] | undefined): KeyParse {
  const parsed = parseIdempotencyKey(header);
  mutatingRequests.inc({ endpoint, idempotency_key: parsed.ok || parsed.code !== "IDEMPOTENCY_KEY_MISSING" ? "present" : "missing" });
  return parsed;
}

/**
 * The idempotency contract of a mutating request, whichever channel carried it (an HTTP route,
 * the console, the HTTP or JetStream inbox). The claim, the effect and the completion
 * commit in ONE transaction: there is no moment at which the effect exists and the key is not
 * marked, or the key is marked and the effect is missing. A repeat is answered from the stored
 * response; a repeat while the first is running gets 409 at once; a key reused for another
 * request gets 422 and nothing else.
 */
export async function runIdempotent(call: IdempotentCall): Promise<IdempotentReply> {
  const screened = await screenIdempotent(call);
  return screened.kind === "answered" ? screened.reply : runFirstTimeAlone(call, screened.scope, screened.digest);
}

/** A request past the replay fast path: its key was not answered by a stored record, so it must claim. */
export type Screened = { kind: "answered"; reply: IdempotentReply } | { kind: "first_time"; scope: IdempotencyScope; digest: string };

/** The key's parse and the replay fast path: one statement (shared with concurrent requests), before any transaction. */
export async function screenIdempotent(call: Pick<IdempotentCall, "pool" | "tenantId" | "endpoint" | "idempotencyKeyHeader" | "canonical">): Promise<Screened> {
  const parsed = idempotencyKeyOf(call.endpoint, call.idempotencyKeyHeader);
  if (!parsed.ok) return { kind: "answered", reply: { ...problemReply(parsed.code, parsed.message), replayed: false } };

  const scope: IdempotencyScope = { tenantId: call.tenantId, endpoint: call.endpoint, key: parsed.key };
  const digest = requestDigest(call.canonical);

  // Fast path: a completed record is replayed after one statement (which writes the repeat's audit
  // row), before any other write; concurrent requests share that statement (docs/decisions/0054).
  const seen = await repeatScreenOf(call.pool).find(scope, digest);
  if (seen && (seen.state === "completed" || !seen.leaseExpired)) return { kind: "answered", reply: heldReply(call, digest, seen) };
  return { kind: "first_time", scope, digest };
}

/**
 * The claim, the effect and the completion of one request in its own transaction: the path of a
 * request alone, and of every caller of a group-committed batch that failed as a whole (0043).
 */
export async function runFirstTimeAlone(call: IdempotentCall, scope: IdempotencyScope, digest: string): Promise<IdempotentReply> {
  let decided: { kind: "done"; reply: Reply } | { kind: "held"; record: IdempotencyRecord } | { kind: "busy" };
  try {
    decided = await withTransaction(call.pool, async (tx) => {
      const claimed = await claim(tx, scope, digest, call.canonical);
      if (claimed.kind !== "claimed") return claimed;
      faultPoint("after_claim");
      const reply = await call.effect(tx);
      faultPoint("after_posting");
      // The completion goes out with COMMIT; a fenced-off attempt rolls the whole transaction back.
      if (!(await completeAndCommit(tx, scope, claimed.attempt, { status: reply.status, body: reply.body, effectRef: reply.effectRef }))) throw new FencedOff();
      return { kind: "done" as const, reply };
    }, { localSettings: claimTransactionSettings });
  } catch (error) {
    // Another request took this key over after our lease expired; our effect rolled back.
    if (error instanceof FencedOff) decided = { kind: "busy" };
    else throw error;
  }
  if (decided.kind === "done") {
    faultPoint("after_commit");
    return { ...decided.reply, replayed: false };
  }
  if (decided.kind === "held") return answerHeld(call, scope, digest, decided.record);
  await audit(call, scope, "in_progress", null);
  return inProgress();
}

function inProgress(): IdempotentReply {
  return {
    ...problemReply("REQUEST_IN_PROGRESS", "a request with this Idempotency-Key is being processed; retry with the same key"),
    replayed: false,
    retryAfterSeconds: limits.http.retryAfterSeconds,
  };
}

function heldReply(call: Pick<IdempotentCall, "canonical">, digest: string, record: IdempotencyRecord): IdempotentReply {
  if (record.digest !== digest) {
    const fields = differingFields(record.canonical, call.canonical);
    return { ...problemReply("IDEMPOTENCY_KEY_REUSE", `this Idempotency-Key was first used with a different request (${fields.join(", ")} differ)`, { differing_fields: fields }), replayed: false };
  }
  if (record.state === "in_progress") return inProgress();
  return { status: record.response.status, body: record.response.body, effectRef: record.response.effectRef, contentType: contentTypeOf(record.response.status), replayed: true };
}

/** The answer to a request whose claim found its key held: replay, 409 in progress or 422 reuse, with its audit row. */
export async function answerHeld(call: Pick<IdempotentCall, "pool" | "canonical">, scope: IdempotencyScope, digest: string, record: IdempotencyRecord): Promise<IdempotentReply> {
  await audit(call, scope, repeatReasonOf(record, digest), record.state === "completed" ? record.response.effectRef : null);
  return heldReply(call, digest, record);
}

function audit(call: Pick<IdempotentCall, "pool">, scope: IdempotencyScope, reason: string, originalRef: string | null): Promise<void> {
  return recordDedupEventsCheaply(call.pool, [{
    tenantId: scope.tenantId, channel: "http", scope: scope.endpoint, dedupKey: scope.key, reason,
    ...(originalRef ? { originalRef } : {}),
  }]);
}

function contentTypeOf(status: number): string {
  return status >= 400 ? "application/problem+json; charset=utf-8" : "application/json; charset=utf-8";
}
