import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { correctDifferenceInTransaction, explainDifferenceInTransaction, findDifference, type Difference } from "../recon/differences.ts";
import { refreshReconMetrics } from "../recon/recon-metrics.ts";
import { needsSecondApprover, type Operator } from "./operators.ts";
import { decidedBy, propose, proposerNamed, refuseWhileProposed, type NamedOperator, type Proposal, type ProposalPath } from "./proposals.ts";

export type DifferenceVerb = "correct" | "explain";
export type DifferenceDecision = { kind: "decided"; difference: Difference } | { kind: "proposed"; proposal: Proposal };

interface DifferenceRequest { tenantId: string; differenceId: string; verb: DifferenceVerb; reason: string; today: string }

/**
 * A decision on a reconciliation difference (docs/decisions/0031, 0035), the decider recorded.
 * `explain` moves no money and is never four-eyed. `correct` posts the keyed transfer
 * recon:<difference id> (decision 0014's meaning); when |delta| is above the tenant's four-eyes
 * amount it is PROPOSED instead (nothing posted, the difference stays open) and runs only when a
 * second approver approves it. While a correction is proposed the difference is decided by nobody
 * else: approve or cancel the proposal first. The difference's row lock orders all of this.
 */
async function decideOrPropose(tx: Tx, request: DifferenceRequest, decider: string,
  proposer: () => Promise<Result<Operator, Finding>>, via: ProposalPath): Promise<Result<DifferenceDecision, Finding>> {
  const difference = await findDifference(tx, request.tenantId, request.differenceId, { forUpdate: true });
  if (!difference) return fail(finding("RECON_DIFFERENCE_UNKNOWN", `no difference ${request.differenceId}`, { field: "difference" }));
  const amountMinor = difference.deltaMinor < 0n ? -difference.deltaMinor : difference.deltaMinor;
  if (difference.state === "open") {
    if (request.verb === "correct" && await needsSecondApprover(tx, request.tenantId, amountMinor)) {
      const by = await proposer();
      if (!by.ok) return by;
      const proposal = await propose(tx, by.value, { subjectKind: "recon_difference", subjectId: difference.differenceId, decision: "correct", reason: request.reason, amountMinor: amountMinor.toString(), currency: difference.currency, targetAccount: null }, via);
      return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
    }
    const free = await refuseWhileProposed(tx, request.tenantId, "recon_difference", difference.differenceId);
    if (!free.ok) return free;
  }
  const decision = { tenantId: request.tenantId, differenceId: request.differenceId, reason: request.reason, operator: decider };
  const decided = request.verb === "correct" ? await correctDifferenceInTransaction(tx, decision, request.today) : await explainDifferenceInTransaction(tx, decision);
  return decided.ok ? ok({ kind: "decided", difference: decided.value }) : decided;
}

/** A signed-in operator's decision (console, /v1/ops), inside the Idempotency-Key's transaction. */
export function decideDifferenceAsOperator(tx: Tx, operator: Operator, request: Omit<DifferenceRequest, "tenantId">): Promise<Result<DifferenceDecision, Finding>> {
  return decideOrPropose(tx, { ...request, tenantId: operator.tenantId }, decidedBy(operator.name), async () => ok(operator), "console");
}

/**
 * A decision through the tenant's API key or the CLI, in a transaction of its own: taken as
 * before at or below the four-eyes amount (recording `operatorName`, or `fallbackName` when none
 * is named); above it, proposed by the approver `operatorName` names (docs/decisions/0035).
 */
export async function decideDifferenceByNamedOperator(
  pool: Pool, request: DifferenceRequest & NamedOperator & { fallbackName: string },
): Promise<Result<DifferenceDecision, Finding>> {
  const decided = await withTransaction(
    pool, (tx) => decideDifferenceByNamedOperatorInTransaction(tx, request));
  await refreshReconMetrics(pool, request.tenantId);
  return decided;
}

/**
 * The same in the caller's transaction (HTTP: the Idempotency-Key's claim commits with it); the
 * caller refreshes the reconciliation metrics once it committed.
 */
export function decideDifferenceByNamedOperatorInTransaction(
  tx: Tx, request: DifferenceRequest & NamedOperator & { fallbackName: string },
): Promise<Result<DifferenceDecision, Finding>> {
  const secret = request.via === "cli" ? request.operatorSecret : undefined;
  return decideOrPropose(tx, request, request.operatorName ?? request.fallbackName,
    () => proposerNamed(tx, request.tenantId, request.operatorName, request.via, secret),
    request.via);
}

/** Open differences counted by reason, in the order they are listed (theirs_only first). */
export function countByReason(differences: readonly Difference[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const difference of differences) counts[difference.reason] = (counts[difference.reason] ?? 0) + 1;
  return counts;
}
