import type { IncidentSummary } from "./list-incidents.ts";
import type { Incident, IncidentDetail, PerimeterCriteria, PerimeterRecord } from "./perimeter.ts";

/**
 * Incidents as the operations API and `clearline incident ... --json` show them (docs/decisions/
 * 0107): snake_case, amounts in minor units as strings, totals by currency.
 */
export interface IncidentSummaryView {
  incident_id: string; title: string; opened_by: string; opened_at: string; records: number;
  totals: Record<string, string>; compensations: number;
}

export function incidentSummaryView(i: IncidentSummary): IncidentSummaryView {
  return {
    incident_id: i.incidentId, title: i.title, opened_by: i.openedBy, opened_at: i.openedAt,
    records: i.records, totals: i.totals, compensations: i.compensations,
  };
}

function criteriaView(c: PerimeterCriteria): Record<string, string> {
  return {
    since: c.since, until: c.until, ...(c.channel ? { channel: c.channel } : {}),
    ...(c.partner ? { partner: c.partner } : {}),
    ...(c.keyPrefix ? { key_prefix: c.keyPrefix } : {}),
  };
}

function perimeterRecordView(r: PerimeterRecord): Record<string, unknown> {
  return {
    channel: r.channel, natural_key: r.naturalKey, source_ref: r.sourceRef,
    transfer_key: r.transferKey, amount_minor: r.amountMinor.toString(), currency: r.currency,
    occurred_at: r.occurredAt, compensated: r.compensated, undone_minor: r.undoneMinor.toString(),
    undoes_key: r.undoesKey,
  };
}

/** An incident as opened, or as shown with when it was opened and its compensations. */
export function incidentView(i: Incident | IncidentDetail): Record<string, unknown> {
  const opened = {
    incident_id: i.incidentId, title: i.title, criteria: criteriaView(i.criteria),
    opened_by: i.openedBy, records: i.records.map(perimeterRecordView), totals: i.totals,
  };
  if (!("compensations" in i)) return opened;
  return {
    ...opened, opened_at: i.openedAt,
    compensations: i.compensations.map((c) => ({
      transfer_key: c.transferKey, compensation_key: c.compensationKey, outcome: c.outcome,
      detail: c.detail, decided_by: c.decidedBy, reason: c.reason, decided_at: c.decidedAt,
    })),
  };
}
