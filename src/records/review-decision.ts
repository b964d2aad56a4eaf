import { assert } from "../assert.ts";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { linkCompensations, postTransfers } from "../ledger/index.ts";
import { compensations } from "../observability/metrics.ts";
import { lockTenantIngestion } from "./tenant-lock.ts";
import type { ReviewState } from "./record-states.ts";
import { decisionPostings, type DecisionPostings } from "./review-postings.ts";
import {
  insertDecision, insertSuperseded, lockReview, markKeyDecided, selectDecision, selectReviewById,
  type ReviewRow,
} from "./store/reviews.ts";

/**
 * A person's decision on a held record (docs/decisions/0011): replace (compensate the original,
 * post the corrected record), apply_as_new (a separate payment under a key of its own) or refuse
 * (nothing posted). The decision row, its postings, the dedup mark's state and a dedup event
 * commit in ONE transaction; one decision per review, for ever.
 */
export type ReviewDecisionKind = "replace" | "apply_as_new" | "refuse";
export const reviewDecisionKinds: readonly ReviewDecisionKind[] = ["replace", "apply_as_new", "refuse"];

export interface DecisionRequest {
  tenantId?: string;          // the CLI may leave it out when the review id is unique
  reviewId: string;
  decision: ReviewDecisionKind;
  reason: string;
  operator: string;
}

/** A recorded decision, as the CLI prints it and the HTTP API answers it. */
export interface DecidedReview {
  review_id: string;
  tenant_id: string;
  decision: ReviewDecisionKind;
  state: ReviewState;
  reason: string;
  operator: string;
  decided_at: string;
  original_transfer_key: string | null;
  compensation_key: string | null;
  posting_key: string | null;
}

export interface DecisionOutcome {
  decided: DecidedReview;
  /** Compensations this call posted (zero for a repeat): counted once their transaction commits. */
  compensationsPosted: number;
}

const stateOfDecision: Record<ReviewDecisionKind, ReviewState> = { replace: "replaced", apply_as_new: "applied_as_new", refuse: "refused" };

/** The decision in a transaction of its own; the compensation metric is counted after the commit. */
export async function decideReview(pool: Pool, request: DecisionRequest): Promise<Result<DecisionOutcome, Finding>> {
  const result = await withTransaction(pool, (tx) => decideReviewInTransaction(tx, request));
  if (result.ok) countCompensations(result.value);
  return result;
}

export function countCompensations(outcome: DecisionOutcome): void {
  if (outcome.compensationsPosted > 0) compensations.inc({ reason: "review_replace" }, outcome.compensationsPosted);
}

/** The decision inside the caller's transaction (HTTP: the Idempotency-Key's claim commits with it). */
export async function decideReviewInTransaction(tx: Tx, request: DecisionRequest): Promise<Result<DecisionOutcome, Finding>> {
  const missing = (detail: string, field: string) =>
    fail(finding("REVIEW_REASON_MISSING", detail, { field }));
  if (request.reason.trim() === "") {
    return missing("a decision needs a reason (--reason)", "reason");
  }
  if (request.operator.trim() === "") {
    return missing("a decision needs an operator's name (--operator)", "operator");
  }
  const found = await selectReviewById(tx, request.reviewId, request.tenantId ?? null);
  if (found.length > 1) {
    const detail = `review ${request.reviewId} exists for several tenants: name one with --tenant`;
    return fail(finding("REVIEW_NOT_FOUND", detail, { field: "tenant" }));
  }
  const row = found[0];
  if (!row) {
    return fail(finding("REVIEW_NOT_FOUND", `no review item ${request.reviewId}`, { field: "id" }));
  }

  // The tenant's ingestion lock: no chunk changes the dedup marks or posts meanwhile (decision 0010);
  // the row lock makes a concurrent decision on this review wait for ours and then see it.
  await lockTenantIngestion(tx, row.tenant_id);
  const state: ReviewState | undefined = await lockReview(tx, row.tenant_id, row.review_id);
  const earlier = await recordedDecision(tx, row.tenant_id, row.review_id);
  if (earlier) return answerDecided(earlier, request.decision);
  if (state !== "open") {
    const detail = `review ${row.review_id} was already ${state} `
      + "(before review decisions were recorded)";
    return fail(finding("REVIEW_DECIDED", detail, { field: "id" }));
  }

  const postings = await decisionPostings(tx, row, request.decision);
  if (!postings.ok) return postings;
  const posted = await postAllOrNothing(tx, postings.value);
  if (!posted.ok) return posted;
  await recordDecision(tx, row, request, postings.value);
  const decided = await recordedDecision(tx, row.tenant_id, row.review_id);
  assert(decided, `decision on ${row.review_id} reads back in its transaction`);
  return ok({ decided, compensationsPosted: postings.value.compensation ? 1 : 0 });
}

function answerDecided(earlier: DecidedReview, decision: ReviewDecisionKind): Result<DecisionOutcome, Finding> {
  if (earlier.decision === decision) return ok({ decided: earlier, compensationsPosted: 0 });
  return fail(finding("REVIEW_DECIDED",
    `review ${earlier.review_id} was already decided: ${earlier.decision} by ${earlier.operator} at ${earlier.decided_at} (${earlier.reason}); a decision is never changed`,
    { field: "decision" }));
}

/**
 * Posts the decision's transfers as one batch, all or nothing: a savepoint around the batch rolls
 * every posting back when one of them is refused, so no decision is ever half-posted.
 */
async function postAllOrNothing(tx: Tx, postings: DecisionPostings): Promise<Result<true, Finding>> {
  if (postings.ordered.length === 0) return ok(true);
  await tx.query("SAVEPOINT review_decision");
  const posted = await postTransfers(tx, postings.ordered.map((transfer) => ({ transfer })));
  for (const { transfer, outcome: result } of posted) {
    if (result.ok && result.value === "applied") continue;
    await tx.query("ROLLBACK TO SAVEPOINT review_decision");
    const key = transfer.transferKey;
    if (!result.ok && result.error.code === "LEDGER_INSUFFICIENT_FUNDS") {
      const detail = `${result.error.message} for ${key}: nothing posted, the review stays open`;
      return fail(finding("REVIEW_INSUFFICIENT_FUNDS", detail, { field: "amount" }));
    }
    if (!result.ok) return fail(result.error);
    // Under the tenant's lock an open review's keys are unposted, unless something else posted them.
    const detail = `${key} was posted already (${result.value}): `
      + "nothing posted, the review stays open";
    return fail(finding("REVIEW_NOT_APPLICABLE", detail, { field: "id" }));
  }
  await tx.query("RELEASE SAVEPOINT review_decision");
  return ok(true);
}

async function recordDecision(tx: Tx, row: ReviewRow, request: DecisionRequest, postings: DecisionPostings): Promise<void> {
  const inserted = await insertDecision(tx, {
    tenantId: row.tenant_id, reviewId: row.review_id, decision: request.decision, reason: request.reason, operator: request.operator,
    state: stateOfDecision[request.decision], originalTransferKey: postings.originalTransferKey,
    compensationKey: postings.compensation?.transferKey ?? null, postingKey: postings.posting?.transferKey ?? null,
  });
  // The review row is locked and had no decision: no one else can have inserted one.
  assert(inserted, `one decision per review (${row.review_id})`);
  if (postings.compensation) {
    const compensatedKey = postings.originalTransferKey;
    assert(compensatedKey !== null, `review ${row.review_id}'s compensation names what it undoes`);
    await linkCompensations(tx, row.tenant_id, [{
      compensationKey: postings.compensation.transferKey, compensatedKey,
      correctedKey: postings.posting?.transferKey ?? null, reason: "review_replace",
      decidedBy: `review:${row.review_id}`,
    }]);
  }
  for (const mark of postings.keyMarks) await markKeyDecided(tx, row.tenant_id, mark);
  // The content a replace sets aside: its repeat names this decision (docs/decisions/0099).
  if (postings.superseded) {
    await insertSuperseded(tx, row.tenant_id, { ...postings.superseded, reviewId: row.review_id });
  }
  await recordDedupEvents(tx, [{
    tenantId: row.tenant_id, channel: row.record.record.channel, scope: `review:${row.review_id}`,
    dedupKey: row.natural_key,
    reason: `review_${request.decision}`, position: `${row.file_id}#${row.record_index}`,
    ...(postings.posting ? { originalRef: postings.posting.transferKey } : postings.originalTransferKey ? { originalRef: postings.originalTransferKey } : {}),
  }]);
}

async function recordedDecision(tx: Tx, tenantId: string, reviewId: string): Promise<DecidedReview | undefined> {
  const row = await selectDecision(tx, tenantId, reviewId);
  if (!row) return undefined;
  return {
    review_id: reviewId, tenant_id: tenantId, decision: row.decision, state: row.state, reason: row.reason, operator: row.operator,
    decided_at: row.decided_at.toISOString(), original_transfer_key: row.original_transfer_key, compensation_key: row.compensation_key, posting_key: row.posting_key,
  };
}
