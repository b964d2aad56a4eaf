import { createHash } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { decideReviewInTransaction, type DecisionOutcome, type ReviewDecisionKind } from "../records/review-decision.ts";
import { itemOf, type ReviewItem } from "../records/review-queue.ts";
import { selectReviewById } from "../records/store/reviews.ts";
import { fourEyesAboveMinor, type Operator } from "./operators.ts";
import { moveOutOfSuspense, suspensePosting, type SuspenseMove } from "./suspense-move.ts";

/**
 * Four eyes on review decisions (docs/decisions/0026). A decision on a held record whose amount
 * is above the tenant's four-eyes amount is not decided: it is PROPOSED (nothing posted, the
 * review stays open). A second approver approves it, and only then does the decision run, with
 * exactly decision 0011's ledger meaning, recording both people. The proposer cannot approve:
 * a CHECK on decision_proposal refuses it even if this code forgot.
 */
export interface Proposal {
  proposal_id: string;
  tenant_id: string;
  subject_kind: "review" | "suspense_move";
  subject_id: string;          // the review id, or the suspense posting's transfer key
  decision: ReviewDecisionKind | "move";
  target_account: string | null;
  reason: string;
  amount_minor: string;
  currency: string;
  proposed_by: string;
  state: "open" | "approved" | "rejected";
  approved_by: string | null;
}

export type OperatorDecision = { kind: "decided"; outcome: DecisionOutcome } | { kind: "proposed"; proposal: Proposal };
export type OperatorMove = { kind: "moved"; move: SuspenseMove } | { kind: "proposed"; proposal: Proposal };
export type ApprovedDecision = { kind: "review"; outcome: DecisionOutcome } | { kind: "suspense_move"; move: SuspenseMove };

async function reviewOf(db: Queryable, tenantId: string, reviewId: string): Promise<ReviewItem | undefined> {
  const [row] = await selectReviewById(db, reviewId, tenantId);
  return row ? itemOf(row) : undefined;
}

/** Who decided, as review_decision.operator records it (one text column since decision 0011). */
function decidedBy(proposer: string, approver?: string): string {
  return approver ? `${proposer} approved by ${approver}` : proposer;
}

/** Decides, or proposes when the review's amount is above the tenant's four-eyes amount. */
export async function decideAsOperator(tx: Tx, operator: Operator, request: { reviewId: string; decision: ReviewDecisionKind; reason: string }): Promise<Result<OperatorDecision, Finding>> {
  const tenantId = operator.tenantId;
  const review = await reviewOf(tx, tenantId, request.reviewId);
  if (!review) return fail(finding("INGEST_REVIEW_NOT_FOUND", `no review ${request.reviewId}`, { field: "review_id" }));
  const above = await fourEyesAboveMinor(tx, tenantId);
  if (review.state !== "open" || above === undefined || BigInt(review.amount_minor) <= above) {
    // A decided review goes to decideReviewInTransaction too: it answers the repeat or refuses a different decision.
    const decided = await decideReviewInTransaction(tx, { tenantId, reviewId: request.reviewId, decision: request.decision, reason: request.reason, operator: decidedBy(operator.name) });
    return decided.ok ? ok({ kind: "decided", outcome: decided.value }) : decided;
  }
  const proposal = await propose(tx, operator, { subjectKind: "review", subjectId: request.reviewId, decision: request.decision, reason: request.reason, amountMinor: review.amount_minor, currency: review.currency, targetAccount: null });
  return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
}

interface ProposalInput { subjectKind: Proposal["subject_kind"]; subjectId: string; decision: Proposal["decision"]; reason: string; amountMinor: string; currency: string; targetAccount: string | null }

async function propose(tx: Tx, operator: Operator, input: ProposalInput): Promise<Result<Proposal, Finding>> {
  // The id names the subject, the decision and the proposer: the same proposal again is the same row.
  const proposalId = `prop_${createHash("sha256").update([operator.tenantId, input.subjectKind, input.subjectId, input.decision, input.targetAccount ?? "", operator.operatorId].join("\u0000")).digest("hex").slice(0, 24)}`;
  try {
    await tx.query(`INSERT INTO decision_proposal (tenant_id, proposal_id, subject_kind, subject_id, decision, target_account, reason, amount_minor, currency, proposed_by)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [operator.tenantId, proposalId, input.subjectKind, input.subjectId, input.decision, input.targetAccount, input.reason, input.amountMinor, input.currency, operator.operatorId]);
  } catch (error) {
    if (sqlState(error) === "23505") return fail(finding("PROPOSAL_OPEN", `${input.subjectId} has an open proposal waiting for a second approver`, { field: "id" }));
    throw error;
  }
  const proposal = await proposalOf(tx, operator.tenantId, proposalId);
  if (!proposal) throw new Error(`proposal ${proposalId} vanished inside its own transaction`);
  const { proposer_id: _hidden, ...shown } = proposal;
  return ok(shown);
}

/** Moves a suspense posting to an account, or proposes the move when its amount is above the four-eyes amount. */
export async function moveAsOperator(tx: Tx, operator: Operator, request: { postingKey: string; targetAccount: string; reason: string }): Promise<Result<OperatorMove, Finding>> {
  const posting = await suspensePosting(tx, operator.tenantId, request.postingKey);
  if (!posting) return fail(finding("SUSPENSE_POSTING_NOT_FOUND", `no suspense posting ${request.postingKey}`, { field: "posting_key" }));
  const above = await fourEyesAboveMinor(tx, operator.tenantId);
  if (above !== undefined && posting.amountMinor > above) {
    const proposal = await propose(tx, operator, { subjectKind: "suspense_move", subjectId: request.postingKey, decision: "move", reason: request.reason, amountMinor: posting.amountMinor.toString(), currency: posting.currency, targetAccount: request.targetAccount });
    return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
  }
  const moved = await moveOutOfSuspense(tx, { tenantId: operator.tenantId, posting, targetAccount: request.targetAccount, reason: request.reason, decidedBy: operator.name, operatorId: operator.operatorId });
  return moved.ok ? ok({ kind: "moved", move: moved.value }) : moved;
}

const SELECT_PROPOSAL = `SELECT p.proposal_id, p.tenant_id, p.subject_kind, p.subject_id, p.decision, p.target_account, p.reason, p.amount_minor::text, p.currency, p.state,
  proposer.name AS proposed_by, approver.name AS approved_by, p.proposed_by AS proposer_id
  FROM decision_proposal p JOIN operator proposer ON proposer.operator_id = p.proposed_by LEFT JOIN operator approver ON approver.operator_id = p.approved_by`;

async function proposalOf(db: Queryable, tenantId: string, proposalId: string, forUpdate = false): Promise<(Proposal & { proposer_id: string }) | undefined> {
  const { rows } = await db.query<Proposal & { proposer_id: string }>(
    `${SELECT_PROPOSAL} WHERE p.tenant_id = $1 AND p.proposal_id = $2${forUpdate ? " FOR UPDATE OF p" : ""}`, [tenantId, proposalId]);
  return rows[0];
}

export async function listProposals(db: Queryable, tenantId: string, rowsMax: number): Promise<Proposal[]> {
  const { rows } = await db.query<Proposal & { proposer_id?: string }>(`${SELECT_PROPOSAL} WHERE p.tenant_id = $1 ORDER BY p.proposed_at LIMIT $2`, [tenantId, rowsMax]);
  return rows.map(({ proposer_id: _hidden, ...proposal }) => proposal);
}

/** The second pair of eyes: runs the proposed decision (its ledger meaning, decision 0011 or the suspense move) and closes the proposal, in one transaction. */
export async function approveProposal(tx: Tx, approver: Operator, proposalId: string): Promise<Result<ApprovedDecision, Finding>> {
  const proposal = await proposalOf(tx, approver.tenantId, proposalId, true);
  if (!proposal) return fail(finding("PROPOSAL_NOT_FOUND", `no proposal ${proposalId}`, { field: "proposal_id" }));
  if (proposal.state !== "open") return fail(finding("PROPOSAL_DECIDED", `proposal ${proposalId} is ${proposal.state}${proposal.approved_by ? ` by ${proposal.approved_by}` : ""}`, { field: "proposal_id" }));
  if (proposal.proposer_id === approver.operatorId) {
    return fail(finding("FOUR_EYES_SELF_APPROVAL", `${approver.name} proposed ${proposalId} and cannot approve it; another approver must`, { field: "proposal_id" }));
  }
  const done = await runProposal(tx, approver, proposal);
  if (!done.ok) return done;   // nothing posted (insufficient funds, not applicable): the proposal stays open
  await tx.query("UPDATE decision_proposal SET state = 'approved', approved_by = $3, approved_at = now() WHERE tenant_id = $1 AND proposal_id = $2",
    [approver.tenantId, proposalId, approver.operatorId]);
  return done;
}

async function runProposal(tx: Tx, approver: Operator, proposal: Proposal): Promise<Result<ApprovedDecision, Finding>> {
  const by = decidedBy(proposal.proposed_by, approver.name);
  if (proposal.subject_kind === "review") {
    const decided = await decideReviewInTransaction(tx, {
      tenantId: approver.tenantId, reviewId: proposal.subject_id, decision: proposal.decision as ReviewDecisionKind, reason: proposal.reason, operator: by,
    });
    return decided.ok ? ok({ kind: "review", outcome: decided.value }) : decided;
  }
  const posting = await suspensePosting(tx, approver.tenantId, proposal.subject_id);
  if (!posting || proposal.target_account === null) return fail(finding("SUSPENSE_POSTING_NOT_FOUND", `no suspense posting ${proposal.subject_id}`, { field: "posting_key" }));
  const moved = await moveOutOfSuspense(tx, { tenantId: approver.tenantId, posting, targetAccount: proposal.target_account, reason: proposal.reason, decidedBy: by, operatorId: approver.operatorId });
  return moved.ok ? ok({ kind: "suspense_move", move: moved.value }) : moved;
}
