import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEvents, type DedupChannel } from "../dedup/dedup-event.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { postTransfer } from "../ledger/post-transfers.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import { postingRuleFor, releaseTransferKeyOf, reversalFor, transferFor, type Transfer } from "../normalize/posting-rules.ts";
import { lockTenantIngestion, type ReviewRecord } from "./chunk.ts";
import { ensurePartnerAccounts, findPartner, resolveAliases } from "./partners.ts";

/** A conflict or suspect waiting for a person (or decided by one). */
export interface ReviewItem {
  review_id: string;
  tenant_id: string;
  reason: "conflict" | "suspect";
  state: "open" | "released" | "refused";
  natural_key: string;
  file_id: string;
  record_index: number;
  position: string | null;
  kind: string;
  amount_minor: string;
  currency: string;
  matched_ref: string | null;
  decision_reason: string | null;
  transfer_key: string | null;
  created_at: string;
}

interface ReviewRow {
  review_id: string;
  tenant_id: string;
  reason: "conflict" | "suspect";
  state: "open" | "released" | "refused";
  natural_key: string;
  fingerprint: string;
  file_id: string;
  record_index: number;
  partner_id: string;
  record: ReviewRecord;
  matched_ref: string | null;
  decision_reason: string | null;
  transfer_key: string | null;
  created_at: Date;
  position: string | null;
}

const SELECT_REVIEW = `SELECT r.review_id, r.tenant_id, r.reason, r.state, r.natural_key, r.fingerprint, r.file_id, r.record_index, r.partner_id, r.record,
  r.matched_ref, r.decision_reason, r.transfer_key, r.created_at, o.position
  FROM ingest_review r LEFT JOIN ingest_outcome o ON o.tenant_id = r.tenant_id AND o.file_id = r.file_id AND o.record_index = r.record_index`;

function itemOf(row: ReviewRow): ReviewItem {
  return {
    review_id: row.review_id, tenant_id: row.tenant_id, reason: row.reason, state: row.state, natural_key: row.natural_key, file_id: row.file_id,
    record_index: row.record_index, position: row.position, kind: row.record.record.kind, amount_minor: row.record.record.amount,
    currency: row.record.record.currency, matched_ref: row.matched_ref, decision_reason: row.decision_reason, transfer_key: row.transfer_key,
    created_at: row.created_at.toISOString(),
  };
}

/** Open items (or all, with `state`), oldest first; without a tenant, every tenant's. */
export async function listReviews(db: Queryable, options: { tenantId?: string; state?: "open" | "released" | "refused" | "all" } = {}): Promise<ReviewItem[]> {
  const state = options.state ?? "open";
  const { rows } = await db.query<ReviewRow>(
    `${SELECT_REVIEW} WHERE ($1::text IS NULL OR r.tenant_id = $1) AND ($2::text = 'all' OR r.state = $2)
      ORDER BY r.created_at, r.review_id LIMIT $3`,
    [options.tenantId ?? null, state, limits.ingest.listRowsMax]);
  return rows.map(itemOf);
}

/** Records posted to a partner's suspense account because their counterparty matched no alias: listed for operations. */
export async function listSuspensePostings(db: Queryable, options: { tenantId?: string } = {}): Promise<Array<{ tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: string; currency: string; transfer_key: string; detail: string }>> {
  const { rows } = await db.query<{ tenant_id: string; file_id: string; position: string; natural_key: string; amount_minor: bigint; currency: string; transfer_key: string; detail: string }>(
    `SELECT tenant_id, file_id, position, natural_key, amount_minor, currency, transfer_key, detail FROM ingest_outcome
      WHERE ($1::text IS NULL OR tenant_id = $1) AND outcome = 'applied' AND code = 'INGEST_COUNTERPARTY_UNRESOLVED'
      ORDER BY created_at DESC LIMIT $2`,
    [options.tenantId ?? null, limits.ingest.listRowsMax]);
  return rows.map((r) => ({ ...r, amount_minor: r.amount_minor.toString() }));
}

export type Decision = "released" | "refused";

/**
 * Releases (posts) or refuses a held record, with the person's reason. The decision is recorded
 * on the item and as a dedup event, in the same transaction as the posting; the posting's key
 * derives from the record (natural key + fingerprint), so a repeated release posts nothing new.
 * A decision is final: the same decision again answers as the first did; the other is refused.
 */
export async function decideReview(pool: Pool, tenantId: string | undefined, reviewId: string, decision: Decision, reason: string): Promise<Result<ReviewItem, Finding>> {
  if (reason.trim() === "") return fail(finding("CONFIG_INVALID", "a decision needs a reason (--reason)", { field: "reason" }));
  return withTransaction(pool, async (tx) => {
    const found = await tx.query<ReviewRow>(`${SELECT_REVIEW} WHERE r.review_id = $1 AND ($2::text IS NULL OR r.tenant_id = $2)`, [reviewId, tenantId ?? null]);
    if (found.rows.length > 1) return fail(finding("INGEST_REVIEW_NOT_FOUND", `review ${reviewId} exists for several tenants: name one with --tenant`, { field: "tenant" }));
    const row = found.rows[0];
    if (!row) return fail(finding("INGEST_REVIEW_NOT_FOUND", `no review item ${reviewId}`, { field: "id" }));
    await lockTenantIngestion(tx, row.tenant_id);
    const locked = await tx.query<{ state: ReviewRow["state"] }>("SELECT state FROM ingest_review WHERE tenant_id = $1 AND review_id = $2 FOR UPDATE", [row.tenant_id, reviewId]);
    const state = locked.rows[0]?.state;
    if (state === decision) return ok(itemOf(row));
    if (state !== "open") return fail(finding("INGEST_REVIEW_DECIDED", `review ${reviewId} was already ${state}`, { field: "id" }));

    let transferKey: string | null = null;
    if (decision === "released") {
      const posted = await postReleased(tx, row);
      if (!posted.ok) return posted;
      transferKey = posted.value;
    }
    if (row.reason === "suspect") {
      await tx.query("UPDATE ingest_record_key SET state = $3, transfer_key = $4 WHERE tenant_id = $1 AND natural_key = $2 AND state = 'held'",
        [row.tenant_id, row.natural_key, decision === "released" ? "applied" : "refused", transferKey]);
    }
    await tx.query(
      "UPDATE ingest_review SET state = $3, decision_reason = $4, decided_at = now(), transfer_key = $5 WHERE tenant_id = $1 AND review_id = $2",
      [row.tenant_id, reviewId, decision, reason, transferKey]);
    const channel = row.record.record.channel as DedupChannel;
    await recordDedupEvents(tx, [{
      tenantId: row.tenant_id, channel, scope: `review:${reviewId}`, dedupKey: row.natural_key, reason: `review_${decision}`,
      position: `${row.file_id}#${row.record_index}`, ...(transferKey ? { originalRef: transferKey } : {}),
    }]);
    return ok({ ...itemOf(row), state: decision, decision_reason: reason, transfer_key: transferKey });
  });
}

async function postReleased(tx: Tx, row: ReviewRow): Promise<Result<string | null, Finding>> {
  const stored = row.record.record;
  const record: CanonicalRecord = { ...stored, amount: BigInt(stored.amount) };
  const transferKey = releaseTransferKeyOf(record.naturalKey, record.fingerprint);
  const rule = postingRuleFor(record);
  if (!rule || record.amount === 0n || rule.action === "record") return ok(null);   // nothing to post: the decision is the effect
  let transfer: Transfer;
  if (rule.action === "post") {
    const partner = await findPartner(tx, row.tenant_id, row.partner_id);
    if (!partner) return fail(finding("INGEST_PARTNER_UNKNOWN", `partner ${row.partner_id} is gone`, { field: "partner" }));
    const accounts = await ensurePartnerAccounts(tx, partner, record.currency);
    if (!accounts.ok) return accounts;
    const alias = rule.counterparty ? record.attributes[rule.counterparty] : undefined;
    const resolved = alias ? (await resolveAliases(tx, row.tenant_id, [alias])).get(alias) : undefined;
    transfer = transferFor(record, rule, accounts.value, resolved && resolved.currency === record.currency ? resolved.accountId : undefined, transferKey);
  } else {
    const original = await tx.query<{ account_id: string; direction: "D" | "C" }>(
      `SELECT e.account_id, e.direction FROM ingest_record_key k JOIN ledger_entry e ON e.tenant_id = k.tenant_id AND e.transfer_key = k.transfer_key
        WHERE k.tenant_id = $1 AND k.natural_key = $2 ORDER BY e.entry_key`, [row.tenant_id, row.matched_ref]);
    if (original.rows.length !== 2) return fail(finding("INGEST_RECORD_ORPHAN", `the original ${row.matched_ref} has no posting to reverse`, { field: "original" }));
    transfer = reversalFor(record, original.rows.map((r) => ({ accountId: r.account_id, direction: r.direction })), transferKey);
  }
  const posted = await postTransfer(tx, transfer);
  if (!posted.ok) {
    return fail(posted.error.code === "LEDGER_INSUFFICIENT_FUNDS" ? finding("INGEST_INSUFFICIENT_FUNDS", `${posted.error.message}: not released`, { field: "amount" }) : posted.error);
  }
  return ok(transfer.transferKey);
}
