import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import {
  decideReviewInTransaction, reviewItemsById, type DecisionOutcome, type ReviewDecisionKind,
  type ReviewItem,
} from "../records/index.ts";
import { type Operator, needsSecondApprover } from "./operators.ts";
import {
  correctDifferenceInTransaction, differenceView, type Difference,
} from "../recon/differences.ts";
import { decidedBy, markApproved, openProposalFor, propose, proposerNamed, refuseWhileProposed, type NamedOperator, type Proposal, type ProposalPath, type StoredProposal } from "./proposals.ts";
import { moveOutOfSuspense, suspensePosting, type SuspenseMove } from "./suspense-move.ts";

export { cancelProposal, listProposals, type Proposal } from "./proposals.ts";

/**
 * Four eyes (docs/decisions/0026, 0035). A decision whose amount is above the tenant's four-eyes
 * amount is not decided but PROPOSED (nothing posted, the subject stays as it is), whatever path it
 * came by. A second approver approves it, and only then does the decision run, with exactly its
 * own ledger meaning, recording both people.
 */
export type OperatorDecision = { kind: "decided"; outcome: DecisionOutcome } | { kind: "proposed"; proposal: Proposal };
export type OperatorMove = { kind: "moved"; move: SuspenseMove } | { kind: "proposed"; proposal: Proposal };
export type ApprovedDecision = { kind: "review"; outcome: DecisionOutcome } | { kind: "suspense_move"; move: SuspenseMove } | { kind: "recon_difference"; difference: Difference };

/**
 * An approval as the operations API and `clearline proposal approve --json` answer it (docs/
 * decisions/0107): the review's decision, { suspense_move } or { difference }.
 */
export function approvedDecisionView(approved: ApprovedDecision): object {
  if (approved.kind === "suspense_move") return { suspense_move: approved.move };
  if (approved.kind === "recon_difference") {
    return { difference: differenceView(approved.difference) };
  }
  return approved.outcome.decided;
}

async function reviewOf(db: Queryable, tenantId: string | undefined, reviewId: string): Promise<Result<ReviewItem | undefined, Finding>> {
  const items = await reviewItemsById(db, reviewId, tenantId);
  if (items.length > 1) {
    const detail = `review ${reviewId} exists for several tenants: name one with --tenant`;
    return fail(finding("REVIEW_NOT_FOUND", detail, { field: "tenant" }));
  }
  return ok(items[0]);
}

interface ReviewDecisionRequest { reviewId: string; decision: ReviewDecisionKind; reason: string }

/**
 * Decides a review, or proposes the decision above the four-eyes amount. `proposer` resolves who
 * proposes (the signed-in operator, or the operator a machine path names) only when one is needed;
 * `decider` is the name a direct decision records.
 */
async function decideOrPropose(tx: Tx, tenantId: string | undefined, request: ReviewDecisionRequest, decider: string,
  proposer: (tenantId: string) => Promise<Result<Operator, Finding>>, via: ProposalPath): Promise<Result<OperatorDecision, Finding>> {
  const found = await reviewOf(tx, tenantId, request.reviewId);
  if (!found.ok) return found;
  const review = found.value;
  if (!review) {
    const detail = `no review ${request.reviewId}`;
    return fail(finding("REVIEW_NOT_FOUND", detail, { field: "review_id" }));
  }
  if (review.state === "open" && await needsSecondApprover(tx, review.tenant_id, BigInt(review.amount_minor))) {
    const by = await proposer(review.tenant_id);
    if (!by.ok) return by;
    const proposal = await propose(tx, by.value, { subjectKind: "review", subjectId: review.review_id, decision: request.decision, reason: request.reason, amountMinor: review.amount_minor, currency: review.currency, targetAccount: null }, via);
    return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
  }
  if (review.state === "open") {
    const free = await refuseWhileProposed(tx, review.tenant_id, "review", review.review_id);
    if (!free.ok) return free;
  }
  // A decided review goes to decideReviewInTransaction too: it answers the repeat or refuses a different decision.
  const decided = await decideReviewInTransaction(tx, { tenantId: review.tenant_id, reviewId: review.review_id, decision: request.decision, reason: request.reason, operator: decider });
  return decided.ok ? ok({ kind: "decided", outcome: decided.value }) : decided;
}

/** A signed-in operator's decision (console, /v1/ops). */
export function decideAsOperator(tx: Tx, operator: Operator, request: ReviewDecisionRequest): Promise<Result<OperatorDecision, Finding>> {
  return decideOrPropose(tx, operator.tenantId, request, decidedBy(operator.name), async () => ok(operator), "console");
}

/**
 * A decision through the tenant's API key or the CLI. At or below the four-eyes amount it is taken
 * as before, recording `operatorName` (the CLI's default when none is named: `fallbackName`).
 * Above it, it is proposed by the operator `operatorName` names (docs/decisions/0035); through
 * the CLI only with that operator's secret (docs/decisions/0066).
 */
export function decideByNamedOperator(
  tx: Tx, request: ReviewDecisionRequest & NamedOperator & { tenantId?: string; fallbackName: string },
): Promise<Result<OperatorDecision, Finding>> {
  return decideOrPropose(tx, request.tenantId, request, request.operatorName ?? request.fallbackName,
    (tenantId) => proposerNamed(tx, tenantId, request.operatorName, request.via, request.via === "cli" ? request.operatorSecret : undefined), request.via);
}

/** Moves a suspense posting to an account, or proposes the move when its amount is above the four-eyes amount. */
export async function moveAsOperator(tx: Tx, operator: Operator, request: { postingKey: string; targetAccount: string; reason: string }): Promise<Result<OperatorMove, Finding>> {
  const posting = await suspensePosting(tx, operator.tenantId, request.postingKey);
  if (!posting) return fail(finding("SUSPENSE_POSTING_NOT_FOUND", `no suspense posting ${request.postingKey}`, { field: "posting_key" }));
  if (await needsSecondApprover(tx, operator.tenantId, posting.amountMinor)) {
    const proposal = await propose(tx, operator, { subjectKind: "suspense_move", subjectId: request.postingKey, decision: "move", reason: request.reason, amountMinor: posting.amountMinor.toString(), currency: posting.currency, targetAccount: request.targetAccount }, "console");
    return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
  }
  const moved = await moveOutOfSuspense(tx, { tenantId: operator.tenantId, posting, targetAccount: request.targetAccount, reason: request.reason, decidedBy: operator.name, operatorId: operator.operatorId });
  return moved.ok ? ok({ kind: "moved", move: moved.value }) : moved;
}

/**
 * The second pair of eyes: runs the proposed decision (its own ledger meaning: decision 0011, the
 * suspense move, or the correction recon:<difference id>) and closes the proposal, in one
 * transaction. The proposer is refused here, and by a CHECK should this code forget.
 */
export async function approveProposal(tx: Tx, approver: Operator, proposalId: string): Promise<Result<ApprovedDecision, Finding>> {
  const open = await openProposalFor(tx, approver, proposalId);
  if (!open.ok) return open;
  if (open.value.subject_kind === "operator" || open.value.subject_kind === "webhook_endpoint") {
    const detail = `${proposalId} grants access: an admin approves it in the console, ` +
      "where its secret is shown once";
    return fail(finding("PROPOSAL_CONSOLE_ONLY", detail, { field: "proposal_id" }));
  }
  if (open.value.proposer_id === approver.operatorId) {
    return fail(finding("FOUR_EYES_SELF_APPROVAL", `${approver.name} proposed ${proposalId} and cannot approve it; another approver must`, { field: "proposal_id" }));
  }
  const done = await runProposal(tx, approver, open.value);
  if (!done.ok) return done;   // nothing posted (insufficient funds, not applicable): the proposal stays open
  await markApproved(tx, approver, proposalId);
  return done;
}

async function runProposal(tx: Tx, approver: Operator, proposal: StoredProposal): Promise<Result<ApprovedDecision, Finding>> {
  const by = decidedBy(proposal.proposed_by, approver.name);
  const tenantId = approver.tenantId;
  if (proposal.subject_kind === "review") {
    const decided = await decideReviewInTransaction(tx, { tenantId, reviewId: proposal.subject_id, decision: proposal.decision as ReviewDecisionKind, reason: proposal.reason, operator: by });
    return decided.ok ? ok({ kind: "review", outcome: decided.value }) : decided;
  }
  if (proposal.subject_kind === "recon_difference") {
    const today = new Date().toISOString().slice(0, 10);
    const corrected = await correctDifferenceInTransaction(tx, { tenantId, differenceId: proposal.subject_id, reason: proposal.reason, operator: by }, today);
    return corrected.ok ? ok({ kind: "recon_difference", difference: corrected.value }) : corrected;
  }
  const posting = await suspensePosting(tx, tenantId, proposal.subject_id);
  if (!posting || proposal.target_account === null) return fail(finding("SUSPENSE_POSTING_NOT_FOUND", `no suspense posting ${proposal.subject_id}`, { field: "posting_key" }));
  const moved = await moveOutOfSuspense(tx, { tenantId, posting, targetAccount: proposal.target_account, reason: proposal.reason, decidedBy: by, operatorId: approver.operatorId });
  return moved.ok ? ok({ kind: "suspense_move", move: moved.value }) : moved;
}
