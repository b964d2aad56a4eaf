import type { Pool, Queryable } from "../db/pool.ts";
import { fail, finding, type Finding, type Result } from "../errors/finding.ts";
import { correctDifference, explainDifference, findDifference, type Difference } from "../recon/differences.ts";
import { fourEyesAboveMinor, type Operator } from "./operators.ts";

export type DifferenceVerb = "correct" | "explain";

/**
 * An operator's decision on a reconciliation difference (docs/decisions/0031): the operator's
 * name is recorded as the decider. `explain` moves no money. `correct` posts the keyed transfer
 * recon:<difference id> (decision 0014's meaning); above the tenant's four-eyes amount it is
 * refused, because the proposal table does not take differences yet and one operator alone must
 * not move that much. Both recon functions run their own transaction and are idempotent by the
 * difference, so `db` (the caller's transaction) only reads here.
 */
export async function decideDifferenceAsOperator(
  pool: Pool, db: Queryable, operator: Operator, request: { differenceId: string; verb: DifferenceVerb; reason: string; today: string },
): Promise<Result<Difference, Finding>> {
  const decision = { tenantId: operator.tenantId, differenceId: request.differenceId, reason: request.reason, operator: operator.name };
  if (request.verb === "explain") return explainDifference(pool, decision);
  const difference = await findDifference(db, operator.tenantId, request.differenceId);
  const above = await fourEyesAboveMinor(db, operator.tenantId);
  const amountMinor = difference && difference.deltaMinor < 0n ? -difference.deltaMinor : difference?.deltaMinor ?? 0n;
  if (difference?.state === "open" && above !== undefined && amountMinor > above) {
    return fail(finding("RECON_CORRECTION_NEEDS_SECOND_APPROVER",
      `difference ${difference.differenceId} moves ${amountMinor} minor units, above the four-eyes amount ${above}: it needs a second approver, which the console cannot record for differences yet`, { field: "difference" }));
  }
  return correctDifference(pool, decision, request.today);
}

/** Open differences counted by reason, in the order they are listed (theirs_only first). */
export function countByReason(differences: readonly Difference[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const difference of differences) counts[difference.reason] = (counts[difference.reason] ?? 0) + 1;
  return counts;
}
