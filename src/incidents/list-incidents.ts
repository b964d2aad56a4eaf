import type { Queryable } from "../db/pool.ts";

export interface IncidentSummary {
  incidentId: string;
  title: string;
  openedBy: string;
  openedAt: string;
  records: number;
  totals: Record<string, string>;   // amount (minor units) by currency
  compensations: number;            // compensation decisions recorded so far
}

/**
 * The tenant's incidents, the newest first, for the operations API and the console
 * (docs/decisions/0031). A listing only: the perimeter and compensations are read by showIncident
 * (perimeter.ts).
 */
export async function listIncidents(db: Queryable, tenantId: string, rowsMax: number): Promise<IncidentSummary[]> {
  const { rows } = await db.query<{ incident_id: string; title: string; opened_by: string; opened_at: Date; records: number; totals: Record<string, string>; compensations: string }>(
    `SELECT i.incident_id, i.title, i.opened_by, i.opened_at, i.records, i.totals,
            (SELECT count(*) FROM incident_compensation c WHERE c.tenant_id = i.tenant_id AND c.incident_id = i.incident_id)::text AS compensations
       FROM incident i WHERE i.tenant_id = $1 ORDER BY i.opened_at DESC, i.incident_id LIMIT $2`,
    [tenantId, rowsMax],
  );
  return rows.map((r) => ({
    incidentId: r.incident_id, title: r.title, openedBy: r.opened_by, openedAt: r.opened_at.toISOString(), records: r.records, totals: r.totals, compensations: Number(r.compensations),
  }));
}
