import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import {
  compensationsOf, linkCompensations, postTransfers, type Transfer,
} from "../ledger/index.ts";
import { compensations as compensationsMetric } from "../observability/metrics.ts";
import { netCompensationOf, plannedCompensations, type PlannedCompensation } from "./net-compensation.ts";
import { showIncident } from "./perimeter.ts";

export type CompensationOutcome = "would_post" | "posted" | "already_compensated" | "already_undone" | "undoes_original" | "refused";
export interface CompensationLine {
  transferKey: string;
  compensationKey: string;
  outcome: CompensationOutcome;
  detail?: string;
  undoneMinor: bigint;        // what reversals, returns or refunds had already undone
  legs: Transfer["legs"];     // what the compensation posts (or would): the net still in effect; none when nothing is
}
export interface CompensationPlan {
  incidentId: string;
  dryRun: boolean;
  compensations: CompensationLine[];
}

/**
 * Compensates every transfer of an incident's perimeter by a keyed batch: each compensation is
 * the mirror of what of its transfer is still in effect (the original minus what reversals,
 * returns or refunds already undid, read now: docs/decisions/0015, items 5-9), keyed
 * `<transfer key>:compensate` (the key a review's replace uses, so a transfer compensated by
 * both is compensated once). A record wholly undone already is `already_undone` and posts
 * nothing. `dryRun` posts nothing and says what would be posted. For real, one transaction posts
 * the batch through the one posting path; a compensation the funds do not allow (the customer
 * spent the money) is refused and recorded, the others post. Repeating it posts nothing more.
 */
export async function compensateIncident(
  pool: Pool, input: { tenantId: string; incidentId: string; reason: string; operator: string; dryRun: boolean },
): Promise<Result<CompensationPlan, Finding>> {
  const dryPlan = await planOf(pool, input.tenantId, input.incidentId);
  if (!dryPlan) return fail(finding("INCIDENT_UNKNOWN", `no incident ${input.incidentId}`, { field: "incident" }));
  if (input.dryRun) {
    return ok({ incidentId: input.incidentId, dryRun: true, compensations: dryPlan.map((p) => lineOf(p, p.outcome ?? "would_post")) });
  }
  const compensations = await withTransaction(pool, async (tx) => {
    // Read again in the transaction that posts: what was undone meanwhile lowers the compensation.
    const planned = (await planOf(tx, input.tenantId, input.incidentId)) ?? [];
    const toPost = planned.filter((p) => p.outcome === undefined);
    const results = await postTransfers(tx, toPost.map((compensation) => ({
      compensation, transfer: netCompensationOf(compensation),
    })));
    const posted = new Map(results.map((r) => [r.compensation.transferKey, r.outcome]));
    const rows = planned.map((p): CompensationLine => {
      if (p.outcome !== undefined) return lineOf(p, p.outcome);
      const outcome = posted.get(p.transferKey);
      if (outcome?.ok) return lineOf(p, outcome.value === "applied" ? "posted" : "already_compensated");
      return { ...lineOf(p, "refused"), detail: outcome ? `${outcome.error.code}: ${outcome.error.message}` : "no outcome" };
    });
    await recordCompensations(tx, input, rows);
    return rows;
  });
  const posted = compensations.filter((c) => c.outcome === "posted").length;
  if (posted > 0) compensationsMetric.inc({ reason: "incident" }, posted);
  return ok({ incidentId: input.incidentId, dryRun: false, compensations });
}

async function planOf(db: Queryable, tenantId: string, incidentId: string): Promise<PlannedCompensation[] | undefined> {
  const incident = await showIncident(db, tenantId, incidentId);
  if (!incident) return undefined;
  const transferKeys = [...new Set(incident.records.map((r) => r.transferKey).filter((k): k is string => k !== null))];
  return plannedCompensations(incident.records, await compensationsOf(db, tenantId, transferKeys, `incident:${incidentId}`));
}

function lineOf(p: PlannedCompensation, outcome: CompensationOutcome): CompensationLine {
  return { transferKey: p.transferKey, compensationKey: p.mirror.transferKey, outcome, undoneMinor: p.undoneMinor, legs: outcome === "already_undone" || outcome === "undoes_original" ? [] : netCompensationOf(p).legs };
}

async function recordCompensations(tx: Tx, input: { tenantId: string; incidentId: string; reason: string; operator: string }, rows: CompensationLine[]): Promise<void> {
  await tx.query(
    `INSERT INTO incident_compensation (tenant_id, incident_id, transfer_key, compensation_key, outcome, detail, decided_by, reason, undone_minor)
     SELECT $1, $2, c.transfer_key, c.compensation_key, c.outcome, c.detail, $3, $4, c.undone_minor
       FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[]) AS c(transfer_key, compensation_key, outcome, detail, undone_minor)
     ON CONFLICT (tenant_id, incident_id, transfer_key) DO UPDATE
       SET outcome = excluded.outcome, detail = excluded.detail, decided_by = excluded.decided_by, reason = excluded.reason, undone_minor = excluded.undone_minor, decided_at = now()
       WHERE incident_compensation.outcome = 'refused'`,
    [input.tenantId, input.incidentId, input.operator, input.reason, rows.map((r) => r.transferKey), rows.map((r) => r.compensationKey), rows.map((r) => r.outcome),
      rows.map((r) => r.detail ?? null), rows.map((r) => r.undoneMinor.toString())],
  );
  // Linked like a review's compensations (docs/decisions/0011): what it compensates, why, who.
  const posted = rows.filter((r) => r.outcome === "posted");
  await linkCompensations(tx, input.tenantId, posted.map((r) => ({
    compensationKey: r.compensationKey, compensatedKey: r.transferKey, correctedKey: null,
    reason: "incident", decidedBy: `incident:${input.incidentId}`,
  })));
}
