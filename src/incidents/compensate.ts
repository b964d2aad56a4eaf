import type { Pool } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { compensationsOf } from "../ledger/compensation.ts";
import { postTransfers } from "../ledger/post-transfers.ts";
import type { Transfer } from "../ledger/transfer.ts";
import { compensations as compensationsMetric } from "../observability/metrics.ts";
import { showIncident } from "./perimeter.ts";

export interface CompensationPlan {
  incidentId: string;
  dryRun: boolean;
  compensations: Array<{ transferKey: string; compensationKey: string; outcome: "would_post" | "posted" | "already_compensated" | "refused"; detail?: string; legs: Transfer["legs"] }>;
}

/**
 * Compensates every transfer of an incident's perimeter by a keyed batch: each compensation is
 * the mirror of its transfer, keyed `<transfer key>:compensate` (the key a review's replace uses,
 * so a transfer compensated by both is compensated once). `dryRun` posts nothing and says what
 * would be posted. For real, one transaction posts the batch through the one posting path; a
 * compensation the funds do not allow (the customer spent the money) is refused and recorded,
 * the others post. Repeating it posts nothing more.
 */
export async function compensateIncident(
  pool: Pool, input: { tenantId: string; incidentId: string; reason: string; operator: string; dryRun: boolean },
): Promise<Result<CompensationPlan, Finding>> {
  const incident = await showIncident(pool, input.tenantId, input.incidentId);
  if (!incident) return fail(finding("INCIDENT_UNKNOWN", `no incident ${input.incidentId}`, { field: "incident" }));
  const transferKeys = [...new Set(incident.records.map((r) => r.transferKey).filter((k): k is string => k !== null))];
  const planned = await compensationsOf(pool, input.tenantId, transferKeys, `incident:${input.incidentId}`);
  const compensated = new Set(incident.records.filter((r) => r.compensated && r.transferKey).map((r) => r.transferKey as string));
  if (input.dryRun) {
    return ok({ incidentId: input.incidentId, dryRun: true, compensations: [...planned].map(([transferKey, transfer]) => ({
      transferKey, compensationKey: transfer.transferKey, outcome: compensated.has(transferKey) ? "already_compensated" : "would_post", legs: transfer.legs })) });
  }
  const compensations = await withTransaction(pool, async (tx) => {
    const transfers = [...planned.values()];
    const outcomes = await postTransfers(tx, transfers);
    const rows = transfers.map((transfer, index) => {
      const outcome = outcomes[index];
      const transferKey = transfer.transferKey.slice(0, -":compensate".length);
      if (outcome?.ok && outcome.value === "applied") return { transferKey, compensationKey: transfer.transferKey, outcome: "posted" as const, legs: transfer.legs };
      if (outcome?.ok) return { transferKey, compensationKey: transfer.transferKey, outcome: "already_compensated" as const, legs: transfer.legs };
      return { transferKey, compensationKey: transfer.transferKey, outcome: "refused" as const, detail: outcome ? `${outcome.error.code}: ${outcome.error.message}` : "no outcome", legs: transfer.legs };
    });
    await tx.query(
      `INSERT INTO incident_compensation (tenant_id, incident_id, transfer_key, compensation_key, outcome, detail, decided_by, reason)
       SELECT $1, $2, c.transfer_key, c.compensation_key, c.outcome, c.detail, $3, $4
         FROM unnest($5::text[], $6::text[], $7::text[], $8::text[]) AS c(transfer_key, compensation_key, outcome, detail)
       ON CONFLICT (tenant_id, incident_id, transfer_key) DO UPDATE
         SET outcome = excluded.outcome, detail = excluded.detail, decided_by = excluded.decided_by, reason = excluded.reason, decided_at = now()
         WHERE incident_compensation.outcome = 'refused'`,
      [input.tenantId, input.incidentId, input.operator, input.reason, rows.map((r) => r.transferKey), rows.map((r) => r.compensationKey), rows.map((r) => r.outcome), rows.map((r) => r.detail ?? null)],
    );
    // Linked like a review's compensations (docs/decisions/0011): what it compensates, why, who.
    const posted = rows.filter((r) => r.outcome === "posted");
    await tx.query(
      `INSERT INTO compensation (tenant_id, compensation_key, compensated_key, reason, decided_by)
       SELECT $1, c.compensation_key, c.compensated_key, 'incident', $2 FROM unnest($3::text[], $4::text[]) AS c(compensation_key, compensated_key)`,
      [input.tenantId, `incident:${input.incidentId}`, posted.map((r) => r.compensationKey), posted.map((r) => r.transferKey)],
    );
    return rows;
  });
  const posted = compensations.filter((c) => c.outcome === "posted").length;
  if (posted > 0) compensationsMetric.inc({ reason: "incident" }, posted);
  return ok({ incidentId: input.incidentId, dryRun: false, compensations });
}
