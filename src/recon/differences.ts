import { openAgeCounts } from "../db/age-buckets.ts";
import {
  instantOfMicrosSql, microsOfSql, pageOf, rowsToAsk, type ListPage, type ListPlace,
} from "../db/list-place.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { openAccount, postTransfer, type Transfer } from "../ledger/index.ts";
import { reconCorrections } from "../observability/metrics.ts";
import { refreshReconMetrics } from "./recon-metrics.ts";

export interface Difference {
  differenceId: string;
  accountId: string;
  reason: string;
  state: "open" | "corrected" | "explained" | "resolved";
  itemKeys: string[];
  transferKeys: string[];
  deltaMinor: bigint;        // theirs minus ours; positive: they show more money in our account than we booked
  currency: string;
  decidedBy: string | null;
  decisionReason: string | null;
  correctionKey: string | null;
  firstSeenAt: string;
}

interface DifferenceRow {
  difference_id: string; account_id: string; reason: string; state: Difference["state"]; item_keys: string[]; transfer_keys: string[];
  delta_minor: string; currency: string; decided_by: string | null; decision_reason: string | null; correction_key: string | null; first_seen_at: Date;
}

const COLUMNS = "difference_id, account_id, reason, state, item_keys, transfer_keys, delta_minor::text, currency, decided_by, decision_reason, correction_key, first_seen_at";

function differenceOf(row: DifferenceRow): Difference {
  return {
    differenceId: row.difference_id, accountId: row.account_id, reason: row.reason, state: row.state, itemKeys: row.item_keys, transferKeys: row.transfer_keys,
    deltaMinor: BigInt(row.delta_minor), currency: row.currency, decidedBy: row.decided_by, decisionReason: row.decision_reason, correctionKey: row.correction_key,
    firstSeenAt: row.first_seen_at.toISOString(),
  };
}

/** A difference as every channel shows it to a machine (docs/decisions/0107). */
export interface DifferenceView {
  difference_id: string;
  account_id: string;
  reason: string;
  state: Difference["state"];
  item_keys: string[];
  transfer_keys: string[];
  delta_minor: string;
  currency: string;
  decided_by: string | null;
  decision_reason: string | null;
  correction_key: string | null;
  first_seen_at: string;
}

/**
 * The one shape of a difference: the HTTP answers, `clearline recon ... --json` and the
 * recon.difference event's data. The delta in minor units as a string, as a review's amount.
 */
export function differenceView(d: Difference): DifferenceView {
  return {
    difference_id: d.differenceId, account_id: d.accountId, reason: d.reason, state: d.state,
    item_keys: d.itemKeys, transfer_keys: d.transferKeys, delta_minor: d.deltaMinor.toString(),
    currency: d.currency, decided_by: d.decidedBy, decision_reason: d.decisionReason,
    correction_key: d.correctionKey, first_seen_at: d.firstSeenAt,
  };
}

/** Differences of a tenant by id (a run's, for their events), in no particular order. */
export async function findDifferences(
  db: Queryable, tenantId: string, differenceIds: readonly string[],
): Promise<Difference[]> {
  const { rows } = await db.query<DifferenceRow>(
    `SELECT ${COLUMNS} FROM recon_difference
      WHERE tenant_id = $1 AND difference_id = ANY ($2::text[])`,
    [tenantId, differenceIds]);
  return rows.map(differenceOf);
}

export async function findDifference(db: Queryable, tenantId: string, differenceId: string, options: { forUpdate?: boolean } = {}): Promise<Difference | undefined> {
  const { rows } = await db.query<DifferenceRow>(`SELECT ${COLUMNS} FROM recon_difference WHERE tenant_id = $1 AND difference_id = $2${options.forUpdate ? " FOR UPDATE" : ""}`, [tenantId, differenceId]);
  return rows[0] ? differenceOf(rows[0]) : undefined;
}

/** Open differences of a tenant (optionally one account), theirs_only before the rest, the oldest first; differences found together in item order, so a listing reads the same every time. */
export async function listOpenDifferences(db: Queryable, tenantId: string, accountId: string | undefined, rowsMax: number): Promise<Difference[]> {
  const { rows } = await db.query<DifferenceRow>(
    `SELECT ${COLUMNS} FROM recon_difference WHERE tenant_id = $1 AND state = 'open' AND ($2::text IS NULL OR account_id = $2)
      ORDER BY (reason = 'theirs_only') DESC, first_seen_at, item_keys, transfer_keys, difference_id LIMIT $3`,
    [tenantId, accountId ?? null, rowsMax],
  );
  return rows.map(differenceOf);
}

/** What a page of the tenant's differences is filtered by (GET /v1/reconciliations/differences). */
export interface DifferencePageQuery {
  after?: ListPlace | undefined;
  state?: Difference["state"] | undefined;
  reason?: string | undefined;
  accountId?: string | undefined;
  seenFrom?: string | undefined;     // an instant, inclusive
  seenBefore?: string | undefined;   // an instant, exclusive
  limit: number;
}

/**
 * A page of the tenant's differences, the oldest first by the time a run first found them and
 * then id (the index of migration 0038), after a place.
 */
export async function differencesPage(
  db: Queryable, tenantId: string, query: DifferencePageQuery,
): Promise<ListPage<Difference>> {
  const { rows } = await db.query<DifferenceRow & { place: string }>(
    `SELECT ${COLUMNS}, ${microsOfSql("d.first_seen_at")} AS place
       FROM recon_difference d
      WHERE d.tenant_id = $1
        AND ($2::text IS NULL
             OR (d.first_seen_at, d.difference_id) > (${instantOfMicrosSql("$2")}, $3))
        AND ($4::text IS NULL OR d.state = $4)
        AND ($5::text IS NULL OR d.reason = $5)
        AND ($6::text IS NULL OR d.account_id = $6)
        AND ($7::timestamptz IS NULL OR d.first_seen_at >= $7)
        AND ($8::timestamptz IS NULL OR d.first_seen_at < $8)
      ORDER BY d.first_seen_at, d.difference_id
      LIMIT $9`,
    [tenantId, query.after?.position ?? null, query.after?.id ?? null, query.state ?? null,
      query.reason ?? null, query.accountId ?? null, query.seenFrom ?? null,
      query.seenBefore ?? null, rowsToAsk(query.limit)]);
  return pageOf(rows, query.limit, differenceOf,
    (row) => ({ position: row.place, id: row.difference_id }));
}

/**
 * Open differences by age since first seen: younger than boundsSeconds[0], then between each
 * bound and the next, then older than the last (bounds ascending).
 */
export async function openDifferenceAgeCounts(
  db: Queryable, tenantId: string, boundsSeconds: readonly number[],
): Promise<number[]> {
  return openAgeCounts(db, { table: "recon_difference", since: "first_seen_at", where: "state = 'open'" },
    { tenantId, boundsSeconds });
}

export function reconSuspenseAccountOf(currency: string): string {
  return `recon-suspense-${currency}`;
}

/** The correction a difference calls for: the settlement account moved by the delta against recon suspense. */
export function correctionTransferOf(tenantId: string, difference: Difference, valueDate: string): Transfer {
  const amountMinor = difference.deltaMinor < 0n ? -difference.deltaMinor : difference.deltaMinor;
  const inward = difference.deltaMinor > 0n; // they hold more of our money than we booked: book it in
  const suspense = reconSuspenseAccountOf(difference.currency);
  return {
    tenantId, transferKey: `recon:${difference.differenceId}`, kind: "recon_correction", valueDate, sourceRef: `recon:${difference.differenceId}`,
    legs: [
      { accountId: inward ? difference.accountId : suspense, direction: "D", amountMinor, currency: difference.currency },
      { accountId: inward ? suspense : difference.accountId, direction: "C", amountMinor, currency: difference.currency },
    ],
  };
}

export interface DifferenceRuling {
  tenantId: string;
  differenceId: string;
  reason: string;
  operator: string;
}

/**
 * `correct`: posts the keyed correction transfer (recon:<difference id>) and marks the difference
 * corrected, in one transaction. Repeating it answers the same and posts nothing more.
 */
export async function correctDifference(
  pool: Pool, decision: DifferenceRuling, today: string,
): Promise<Result<Difference, Finding>> {
  const result = await withTransaction(pool, (tx) => correctDifferenceInTransaction(tx, decision, today));
  await refreshReconMetrics(pool, decision.tenantId);
  return result;
}

/** `correct` inside the caller's transaction (an approval, an Idempotency-Key's claim): the posting commits with it. */
export async function correctDifferenceInTransaction(
  tx: Tx, decision: DifferenceRuling, today: string,
): Promise<Result<Difference, Finding>> {
  const found = await decidable(tx, decision, "corrected");
  if (!found.ok || found.value.state === "corrected") return found;
  const difference = found.value;
  if (difference.deltaMinor === 0n) {
    return fail(finding("RECON_DIFFERENCE_NOT_CORRECTABLE", `difference ${difference.differenceId} (${difference.reason}) moves no money: explain it`, { field: "difference" }));
  }
  await openAccount(tx, { tenantId: decision.tenantId, accountId: reconSuspenseAccountOf(difference.currency), kind: "suspense", currency: difference.currency });
  const transfer = correctionTransferOf(decision.tenantId, difference, today);
  const posted = await postTransfer(tx, transfer);
  if (!posted.ok) return posted;
  reconCorrections.inc({ decision: "corrected", reason: difference.reason });
  return ok(await decide(tx, decision, "corrected", transfer.transferKey));
}

/** `explain`: closes the difference with a reason; no money moves. Repeating it answers the same. */
export async function explainDifference(
  pool: Pool, decision: DifferenceRuling,
): Promise<Result<Difference, Finding>> {
  const result = await withTransaction(pool, (tx) => explainDifferenceInTransaction(tx, decision));
  await refreshReconMetrics(pool, decision.tenantId);
  return result;
}

export async function explainDifferenceInTransaction(
  tx: Tx, decision: DifferenceRuling,
): Promise<Result<Difference, Finding>> {
  const found = await decidable(tx, decision, "explained");
  if (!found.ok || found.value.state === "explained") return found;
  reconCorrections.inc({ decision: "explained", reason: found.value.reason });
  return ok(await decide(tx, decision, "explained", null));
}

/** The difference, locked; refused when another decision closed it first. */
async function decidable(
  tx: Tx, decision: DifferenceRuling, wanted: "corrected" | "explained",
): Promise<Result<Difference, Finding>> {
  const difference = await findDifference(tx, decision.tenantId, decision.differenceId, { forUpdate: true });
  if (!difference) return fail(finding("RECON_DIFFERENCE_UNKNOWN", `no difference ${decision.differenceId}`, { field: "difference" }));
  if (difference.state === wanted || difference.state === "open") return ok(difference);
  return fail(finding("RECON_DIFFERENCE_DECIDED", `difference ${difference.differenceId} is ${difference.state}${difference.decidedBy ? ` by ${difference.decidedBy}` : ""}`, { field: "difference" }));
}

async function decide(
  tx: Tx, decision: DifferenceRuling, state: "corrected" | "explained",
  correctionKey: string | null,
): Promise<Difference> {
  const { rows } = await tx.query<DifferenceRow>(
    `UPDATE recon_difference SET state = $3, decided_by = $4, decision_reason = $5, decided_at = now(), correction_key = $6
      WHERE tenant_id = $1 AND difference_id = $2 RETURNING ${COLUMNS}`,
    [decision.tenantId, decision.differenceId, state, decision.operator, decision.reason, correctionKey],
  );
  return differenceOf(rows[0] as DifferenceRow);
}
