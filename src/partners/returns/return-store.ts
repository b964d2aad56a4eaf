import type { Queryable } from "../../db/pool.ts";
import type { Tx } from "../../db/transaction.ts";

/** An entry refused at posting that goes back to its partner. */
export interface ReturnEntryDraft {
  tenantId: string;
  naturalKey: string;
  partnerId: string;
  fileId: string;
  line: number;
  reasonCode: string;
}

export interface PendingReturn {
  naturalKey: string;
  fileId: string;
  line: number;
  reasonCode: string;
}

/**
 * Records refused entries to be returned, in the refusal's transaction. The natural key is the
 * primary key: an entry is returned once, whatever file brings it back.
 */
export async function recordReturnEntries(tx: Tx, drafts: readonly ReturnEntryDraft[]): Promise<void> {
  if (drafts.length === 0) return;
  await tx.query(
    `INSERT INTO ach_return_entry (tenant_id, natural_key, partner_id, file_id, line, reason_code)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[])
     ON CONFLICT DO NOTHING`,
    [drafts.map((d) => d.tenantId), drafts.map((d) => d.naturalKey), drafts.map((d) => d.partnerId), drafts.map((d) => d.fileId), drafts.map((d) => d.line), drafts.map((d) => d.reasonCode)],
  );
}

/**
 * The partner's pending returns recorded up to the cut-off, locked for this cut: a concurrent cut
 * waits, then finds them stamped and skips them.
 */
export async function lockPendingReturns(tx: Tx, tenantId: string, partnerId: string, cutoffAt: Date, rowsMax: number): Promise<PendingReturn[]> {
  const { rows } = await tx.query<{ natural_key: string; file_id: string; line: number; reason_code: string }>(
    `SELECT natural_key, file_id, line, reason_code FROM ach_return_entry
      WHERE tenant_id = $1 AND partner_id = $2 AND cut_key IS NULL AND refused_code IS NULL
        AND created_at <= $3
      ORDER BY created_at, file_id, line LIMIT $4 FOR UPDATE`,
    [tenantId, partnerId, cutoffAt, rowsMax],
  );
  return rows.map((r) => ({ naturalKey: r.natural_key, fileId: r.file_id, line: r.line, reasonCode: r.reason_code }));
}

export async function stampReturns(tx: Tx, tenantId: string, naturalKeys: readonly string[], cutKey: string): Promise<void> {
  await tx.query("UPDATE ach_return_entry SET cut_key = $3 WHERE tenant_id = $1 AND natural_key = ANY($2::text[])", [tenantId, naturalKeys, cutKey]);
}

/** A partner's pending returns, oldest first (bounded by rowsMax), for `clearline partner returns list`. */
export async function listPendingReturns(db: Queryable, tenantId: string, partnerId: string, rowsMax: number): Promise<Array<PendingReturn & { createdAt: Date }>> {
  const { rows } = await db.query<{ natural_key: string; file_id: string; line: number; reason_code: string; created_at: Date }>(
    `SELECT natural_key, file_id, line, reason_code, created_at FROM ach_return_entry
      WHERE tenant_id = $1 AND partner_id = $2 AND cut_key IS NULL AND refused_code IS NULL
      ORDER BY created_at, file_id, line LIMIT $3`,
    [tenantId, partnerId, rowsMax],
  );
  return rows.map((r) => ({ naturalKey: r.natural_key, fileId: r.file_id, line: r.line, reasonCode: r.reason_code, createdAt: r.created_at }));
}

/** A pending return refused rather than sent (past its deadline: docs/decisions/0094). */
export interface RefusedReturn {
  naturalKey: string;
  code: "RETURN_DEADLINE_PASSED";
  detail: string;
}

/** Marks returns refused: no cut takes them again; the code and detail say why. */
export async function refuseReturns(
  tx: Tx, tenantId: string, refused: readonly RefusedReturn[],
): Promise<void> {
  if (refused.length === 0) return;
  await tx.query(
    `UPDATE ach_return_entry AS e SET refused_code = r.code, refused_detail = r.detail
       FROM unnest($2::text[], $3::text[], $4::text[]) AS r(natural_key, code, detail)
      WHERE e.tenant_id = $1 AND e.natural_key = r.natural_key AND e.cut_key IS NULL`,
    [tenantId, refused.map((r) => r.naturalKey), refused.map((r) => r.code),
      refused.map((r) => r.detail)],
  );
}
