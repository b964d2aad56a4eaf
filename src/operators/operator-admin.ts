import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import type { Operator, OperatorRole } from "./operators.ts";
import { hashOperatorSecret, newOperatorSecret } from "./secret.ts";

/**
 * An admin's work on the tenant's operators (docs/decisions/0106): the list, disabling one (no
 * sign-in, its sessions end; the row and every decision it made stay), and a new secret (the old
 * one stops working, its sessions end; the new one is shown once and only its hash is stored).
 */
export interface ListedOperator {
  operatorId: string;
  name: string;
  role: OperatorRole;
  createdAt: string;
  disabledAt: string | null;
  disabledBy: string | null;
  disabledReason: string | null;
}

const timeText = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

export async function listOperators(
  db: Queryable, tenantId: string, rowsMax: number,
): Promise<ListedOperator[]> {
  const { rows } = await db.query<{
    operator_id: string; name: string; role: OperatorRole; created_at: string;
    disabled_at: string | null; disabled_by: string | null; disabled_reason: string | null;
  }>(
    `SELECT operator_id, name, role, ${timeText("created_at")} AS created_at,
            ${timeText("disabled_at")} AS disabled_at, disabled_by, disabled_reason
       FROM operator
      WHERE tenant_id = $1
      ORDER BY name
      LIMIT $2`,
    [tenantId, rowsMax],
  );
  return rows.map((r) => ({
    operatorId: r.operator_id, name: r.name, role: r.role, createdAt: r.created_at,
    disabledAt: r.disabled_at, disabledBy: r.disabled_by, disabledReason: r.disabled_reason,
  }));
}

function refuseUnlessAdmin(operator: Operator): Result<true, Finding> {
  if (operator.role === "admin") return ok(true);
  const detail = `${operator.name} is a ${operator.role}; managing operators needs admin`;
  return fail(finding("OPERATOR_ROLE_FORBIDDEN", detail, { field: "role" }));
}

/** The tenant's operator that is not disabled, or why not. */
export async function activeOperator(
  db: Queryable, tenantId: string, operatorId: string,
): Promise<Result<{ operatorId: string; name: string }, Finding>> {
  const { rows } = await db.query<{ name: string; disabled: boolean }>(
    `SELECT name, disabled_at IS NOT NULL AS disabled
       FROM operator
      WHERE tenant_id = $1 AND operator_id = $2`,
    [tenantId, operatorId],
  );
  const row = rows[0];
  if (!row) {
    return fail(finding("OPERATOR_UNKNOWN", `no operator ${operatorId}`, { field: "operator_id" }));
  }
  if (row.disabled) {
    const detail = `${row.name} is disabled already`;
    return fail(finding("OPERATOR_DISABLED", detail, { field: "operator_id" }));
  }
  return ok({ operatorId, name: row.name });
}

/**
 * Disables an operator at once, by one admin (a revocation never waits for a second person), with
 * a reason; its sessions end in the same transaction. An admin cannot disable itself.
 */
export async function disableOperator(
  tx: Tx, admin: Operator, input: { operatorId: string; reason: string },
): Promise<Result<{ name: string; sessionsEnded: number }, Finding>> {
  const allowed = refuseUnlessAdmin(admin);
  if (!allowed.ok) return allowed;
  if (input.reason.trim() === "") {
    return fail(finding("OPERATOR_REASON_MISSING", "give a reason", { field: "reason" }));
  }
  if (input.operatorId === admin.operatorId) {
    const detail = `${admin.name} cannot disable itself; another admin must`;
    return fail(finding("OPERATOR_SELF_DISABLE", detail, { field: "operator_id" }));
  }
  const target = await activeOperator(tx, admin.tenantId, input.operatorId);
  if (!target.ok) return target;
  await tx.query(
    `UPDATE operator
        SET disabled_at = now(), disabled_by = $3, disabled_reason = $4
      WHERE tenant_id = $1 AND operator_id = $2 AND disabled_at IS NULL`,
    [admin.tenantId, input.operatorId, admin.name, input.reason.trim()],
  );
  const ended = await tx.query("DELETE FROM operator_session WHERE operator_id = $1",
    [input.operatorId]);
  return ok({ name: target.value.name, sessionsEnded: ended.rowCount ?? 0 });
}

/** Gives an active operator a new secret now; the old one and its sessions stop working. */
export async function rotateOperatorSecret(
  tx: Tx, tenantId: string, operatorId: string,
): Promise<Result<{ name: string; secret: string }, Finding>> {
  const target = await activeOperator(tx, tenantId, operatorId);
  if (!target.ok) return target;
  const secret = newOperatorSecret();
  await tx.query(
    "UPDATE operator SET secret_hash = $3 WHERE tenant_id = $1 AND operator_id = $2",
    [tenantId, operatorId, await hashOperatorSecret(secret)],
  );
  await tx.query("DELETE FROM operator_session WHERE operator_id = $1", [operatorId]);
  return ok({ name: target.value.name, secret });
}

export { refuseUnlessAdmin };
