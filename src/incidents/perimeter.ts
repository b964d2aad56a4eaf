import { createHash } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";

export const incidentChannels = ["http", "ach", "iso20022", "iso8583"] as const;
export type IncidentChannel = (typeof incidentChannels)[number];

export interface PerimeterCriteria {
  since: string;              // inclusive, a date or timestamp
  until: string;              // exclusive
  channel?: IncidentChannel;
  partner?: string;           // partner id: file records of that partner only
  keyPrefix?: string;         // natural keys starting with it
}

export interface PerimeterRecord {
  channel: string;
  naturalKey: string;
  sourceRef: string | null;
  transferKey: string | null;
  amountMinor: bigint;
  currency: string;
  occurredAt: string;
  compensated: boolean;       // its transfer's compensation (<key>:compensate) exists already
  // what reversals, returns or refunds already undid (docs/decisions/0015, item 5)
  undoneMinor: bigint;
  // a return: the natural key of the original it undid (its effect counts in that original's
  // undone)
  undoesKey: string | null;
}

export interface Incident {
  incidentId: string;
  title: string;
  criteria: PerimeterCriteria;
  openedBy: string;
  records: PerimeterRecord[];
  totals: Record<string, string>;   // amount (minor units) by currency
}

/**
 * What was already undone of record `r` (channel, natural_key, amount_minor) of tenant $1, read
 * from the store that records the undoing (docs/decisions/0015, item 5), capped at its amount:
 * an ISO 8583 original's reversal (undone_minor; a pre-0010 row with an effect was a full
 * reversal), the applied returns matched to a file record, an HTTP payment's refunds.
 */
const UNDONE_SQL = `
  LEAST(r.amount_minor, CASE
    WHEN r.channel = 'iso8583' THEN (
      SELECT coalesce(sum(coalesce(
               rv.undone_minor, CASE WHEN rv.effect_key IS NULL THEN 0 ELSE r.amount_minor END
             )), 0)
        FROM iso8583_inbound_reversal rv
       WHERE rv.tenant_id = $1 AND rv.original_key = r.natural_key)
    WHEN r.channel = 'http' THEN (
      SELECT coalesce(sum(p.refunded_minor), 0)
        FROM payment p
       WHERE p.tenant_id = $1 AND p.client_reference = substr(r.natural_key, 6)
         AND p.transfer_key = r.transfer_key)
    ELSE (
      SELECT coalesce(sum(x.amount_minor), 0)
        FROM record_key x
       WHERE x.tenant_id = $1 AND x.matched_key = r.natural_key AND x.state = 'applied')
  END)::text AS undone_minor,
  CASE WHEN r.channel IN ('ach', 'iso20022') THEN (
    SELECT x.matched_key
      FROM record_key x
     WHERE x.tenant_id = $1 AND x.natural_key = r.natural_key)
  END AS undoes_key`;

/**
 * Every record that arrived in the window through the channels that post money, with its
 * transfer: HTTP payments (by client_reference), file records (ACH and ISO 20022, by natural
 * key, with file and position) and ISO 8583 messages (by natural key). It reads each channel's
 * dedup store until the record core gives one history of records (docs/decisions/0032).
 */
const PERIMETER_SQL = `
  WITH records AS (
    SELECT 'http' AS channel, 'http:' || p.client_reference AS natural_key,
           'http:' || p.payment_id AS source_ref, p.transfer_key, p.amount_minor, p.currency,
           p.created_at, NULL::text AS partner_id
      FROM payment p
     WHERE p.tenant_id = $1 AND p.created_at >= $2::timestamptz AND p.created_at < $3::timestamptz
       AND p.transfer_key IS NOT NULL
    UNION ALL
    SELECT k.channel, k.natural_key, k.file_id || ' ' || k.position, k.transfer_key,
           k.amount_minor, k.currency, k.created_at, f.partner_id
      FROM record_key k
      JOIN received_file f ON f.tenant_id = k.tenant_id AND f.file_id = k.file_id
     WHERE k.tenant_id = $1 AND k.created_at >= $2::timestamptz AND k.created_at < $3::timestamptz
       AND k.transfer_key IS NOT NULL
    UNION ALL
    SELECT 'iso8583', i.natural_key, 'iso8583:' || i.mti || coalesce(' ' || i.connection, ''),
           i.effect_key, i.amount_minor, i.currency, i.created_at, NULL
      FROM iso8583_inbound i
     WHERE i.tenant_id = $1 AND i.created_at >= $2::timestamptz AND i.created_at < $3::timestamptz
       AND i.effect_key IS NOT NULL
  )
  SELECT r.channel, r.natural_key, r.source_ref, r.transfer_key, r.amount_minor::text, r.currency,
         to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
         EXISTS (SELECT 1 FROM transfer c
                  WHERE c.tenant_id = $1 AND c.transfer_key = r.transfer_key || ':compensate')
           AS compensated,
         ${UNDONE_SQL}
    FROM records r
   WHERE ($4::text IS NULL OR r.channel = $4) AND ($5::text IS NULL OR r.partner_id = $5)
     AND ($6::text IS NULL OR starts_with(r.natural_key, $6))
   ORDER BY r.created_at, r.natural_key
   LIMIT $7`;

/** A record of a perimeter as the queries read it (PERIMETER_SQL and an incident's own). */
interface PerimeterRow {
  channel: string;
  natural_key: string;
  source_ref: string | null;
  transfer_key: string | null;
  amount_minor: string;
  currency: string;
  occurred_at: string;
  compensated: boolean;
  undone_minor: string;
  undoes_key: string | null;
}

export async function perimeterRecords(
  db: Queryable, tenantId: string, criteria: PerimeterCriteria,
): Promise<Result<PerimeterRecord[], Finding>> {
  if (
    Number.isNaN(Date.parse(criteria.since)) || Number.isNaN(Date.parse(criteria.until)) ||
    Date.parse(criteria.since) >= Date.parse(criteria.until)
  ) {
    return fail(
      finding(
        "INCIDENT_PERIOD_INVALID",
        `since ${criteria.since} and until ${criteria.until} are not a window`, { field: "since" },
      ),
    );
  }
  const { rows } = await db.query<PerimeterRow>(PERIMETER_SQL, [
    tenantId, criteria.since, criteria.until, criteria.channel ?? null, criteria.partner ?? null,
    criteria.keyPrefix ?? null, limits.recon.perimeterRecordsMax + 1,
  ]);
  if (rows.length > limits.recon.perimeterRecordsMax) {
    return fail(
      finding(
        "INCIDENT_PERIMETER_TOO_LARGE",
        `more than ${limits.recon.perimeterRecordsMax} records; narrow by channel, partner or ` +
        `key prefix`,
        { field: "until" },
      ),
    );
  }
  return ok(
    rows.map((r) => ({
      channel: r.channel, naturalKey: r.natural_key, sourceRef: r.source_ref,
      transferKey: r.transfer_key, amountMinor: BigInt(r.amount_minor), currency: r.currency,
      occurredAt: r.occurred_at, compensated: r.compensated, undoneMinor: BigInt(r.undone_minor),
      undoesKey: r.undoes_key,
    })),
  );
}

export function perimeterTotalsOf(records: readonly PerimeterRecord[]): Record<string, string> {
  const totals = new Map<string, bigint>();
  for (const r of records) totals.set(r.currency, (totals.get(r.currency) ?? 0n) + r.amountMinor);
  return Object.fromEntries(
    [...totals].sort().map(([currency, total]) => [currency, total.toString()]),
  );
}

/**
 * Takes the perimeter and records it as an incident. The incident id is derived from the tenant,
 * the title and the criteria, so the same command twice is the same incident (stored once).
 */
export async function openIncident(
  pool: Pool, tenantId: string, title: string, criteria: PerimeterCriteria, operator: string,
): Promise<Result<IncidentDetail, Finding>> {
  const records = await perimeterRecords(pool, tenantId, criteria);
  if (!records.ok) return records;
  const canonical = JSON.stringify([
    tenantId, title, criteria.since, criteria.until, criteria.channel ?? null,
    criteria.partner ?? null, criteria.keyPrefix ?? null,
  ]);
  const incidentId = `inc_${createHash("sha256").update(canonical).digest("hex").slice(0, 20)}`;
  const totals = perimeterTotalsOf(records.value);
  await withTransaction(pool, async (tx) => {
    const opened = await tx.query(
      `INSERT INTO incident (tenant_id, incident_id, title, criteria, opened_by, records, totals)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT DO NOTHING`,
      [
        tenantId, incidentId, title, JSON.stringify(criteria), operator, records.value.length,
        JSON.stringify(totals),
      ],
    );
    if (opened.rowCount === 0) return;
    const r = records.value;
    await tx.query(
      `INSERT INTO incident_record (tenant_id, incident_id, seq, channel, natural_key, source_ref,
         transfer_key, amount_minor, currency, occurred_at)
       SELECT $1, $2, x.n, x.channel, x.natural_key, x.source_ref, x.transfer_key, x.amount_minor,
         x.currency, x.occurred_at::timestamptz
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[],
         $9::text[]) WITH ORDINALITY AS x(channel, natural_key, source_ref, transfer_key,
         amount_minor, currency, occurred_at, n)`,
      [
        tenantId, incidentId, r.map((x) => x.channel), r.map((x) => x.naturalKey),
        r.map((x) => x.sourceRef), r.map((x) => x.transferKey),
        r.map((x) => x.amountMinor.toString()), r.map((x) => x.currency),
        r.map((x) => x.occurredAt),
      ],
    );
  });
  const stored = await showIncident(pool, tenantId, incidentId);
  return stored
    ? ok(stored)
    : fail(finding("INCIDENT_UNKNOWN", `incident ${incidentId} was not stored`, {}));
}

export interface IncidentDetail extends Incident {
  openedAt: string;
  compensations: Array<{
    transferKey: string;
    compensationKey: string;
    outcome: string;
    detail: string | null;
    decidedBy: string;
    reason: string;
    decidedAt: string;
  }>;
}

/** The perimeter as it was taken, in its order, with what has been undone of each record since. */
async function incidentRecords(
  db: Queryable, tenantId: string, incidentId: string,
): Promise<PerimeterRow[]> {
  const { rows } = await db.query<PerimeterRow>(
    `SELECT r.channel, r.natural_key, r.source_ref, r.transfer_key, r.amount_minor::text,
            r.currency,
            to_char(r.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
              AS occurred_at,
            EXISTS (SELECT 1 FROM transfer c
                     WHERE c.tenant_id = r.tenant_id
                       AND c.transfer_key = r.transfer_key || ':compensate') AS compensated,
            ${UNDONE_SQL}
       FROM incident_record r
      WHERE r.tenant_id = $1 AND r.incident_id = $2
      ORDER BY r.seq`,
    [tenantId, incidentId],
  );
  return rows;
}

/**
 * The incident as recorded: the perimeter as it was taken, and every compensation decided for it.
 */
export async function showIncident(
  db: Queryable, tenantId: string, incidentId: string,
): Promise<IncidentDetail | undefined> {
  const head = await db.query<{
    title: string;
    criteria: PerimeterCriteria;
    opened_by: string;
    opened_at: Date;
    totals: Record<string, string>;
  }>(
    `SELECT title, criteria, opened_by, opened_at, totals
     FROM incident
     WHERE tenant_id = $1 AND incident_id = $2`,
    [tenantId, incidentId],
  );
  const incident = head.rows[0];
  if (!incident) return undefined;
  const records = await incidentRecords(db, tenantId, incidentId);
  const compensations = await db.query<{
    transfer_key: string;
    compensation_key: string;
    outcome: string;
    detail: string | null;
    decided_by: string;
    reason: string;
    decided_at: Date;
  }>(
    `SELECT transfer_key, compensation_key, outcome, detail, decided_by, reason, decided_at
     FROM incident_compensation
     WHERE tenant_id = $1 AND incident_id = $2
     ORDER BY decided_at, transfer_key`,
    [tenantId, incidentId],
  );
  return {
    incidentId,
    title: incident.title,
    criteria: incident.criteria,
    openedBy: incident.opened_by,
    openedAt: incident.opened_at.toISOString(),
    totals: incident.totals,
    records: records.map((r) => ({
      channel: r.channel, naturalKey: r.natural_key, sourceRef: r.source_ref,
      transferKey: r.transfer_key, amountMinor: BigInt(r.amount_minor), currency: r.currency,
      occurredAt: r.occurred_at, compensated: r.compensated, undoneMinor: BigInt(r.undone_minor),
      undoesKey: r.undoes_key,
    })),
    compensations: compensations.rows.map((c) => ({
      transferKey: c.transfer_key, compensationKey: c.compensation_key, outcome: c.outcome,
      detail: c.detail, decidedBy: c.decided_by, reason: c.reason,
      decidedAt: c.decided_at.toISOString(),
    })),
  };
}
