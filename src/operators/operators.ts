import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { sqlState } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { tenantIdsNamed } from "../tenants/tenants.ts";
import { hashOperatorSecret, newOperatorSecret, secretMatches } from "./secret.ts";

/** viewer reads; approver also decides; admin also sets the tenant's four-eyes amount (docs/decisions/0026). */
export type OperatorRole = "viewer" | "approver" | "admin";
export const operatorRoles: readonly OperatorRole[] = ["viewer", "approver", "admin"];

export interface Operator {
  operatorId: string;
  tenantId: string;
  name: string;
  role: OperatorRole;
}

interface OperatorRow { operator_id: string; tenant_id: string; name: string; role: OperatorRole; secret_hash: string }

function operatorOf(row: OperatorRow): Operator {
  return { operatorId: row.operator_id, tenantId: row.tenant_id, name: row.name, role: row.role };
}

export function isOperatorRole(role: string): role is OperatorRole {
  return (operatorRoles as readonly string[]).includes(role);
}

/** Creates an operator; the secret is returned once and only its scrypt hash is stored. */
export async function createOperator(db: Queryable, input: { tenantId: string; name: string; role: string }): Promise<Result<Operator & { secret: string }, Finding>> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,62}$/.test(input.name)) {
    return fail(finding("OPERATOR_NAME_INVALID", "an operator name is 1 to 63 letters, digits, '.', '_', '@' or '-'", { field: "name" }));
  }
  if (!isOperatorRole(input.role)) return fail(finding("OPERATOR_ROLE_INVALID", `role ${input.role} is not viewer, approver or admin`, { field: "role" }));
  const secret = newOperatorSecret();
  const operatorId = `op_${randomBytes(10).toString("hex")}`;
  try {
    await db.query("INSERT INTO operator (operator_id, tenant_id, name, role, secret_hash) VALUES ($1, $2, $3, $4, $5)",
      [operatorId, input.tenantId, input.name, input.role, await hashOperatorSecret(secret)]);
  } catch (error) {
    if (sqlState(error) === "23505") return fail(finding("OPERATOR_EXISTS", `the tenant has an operator named ${input.name}`, { field: "name" }));
    throw error;
  }
  return ok({ operatorId, tenantId: input.tenantId, name: input.name, role: input.role, secret });
}

/**
 * The operator whose tenant (name or id), name and secret match and who is not disabled (0106);
 * undefined for any mismatch, without saying which.
 */
export async function authenticateOperator(db: Queryable, input: { tenant: string; name: string; secret: string }): Promise<Operator | undefined> {
  const tenantIds = await tenantIdsNamed(db, input.tenant);
  const { rows } = await db.query<OperatorRow>(
    `SELECT operator_id, tenant_id, name, role, secret_hash
       FROM operator
      WHERE tenant_id = ANY($1::text[]) AND name = $2
        AND disabled_at IS NULL`, [tenantIds, input.name]);
  const row = rows[0];
  if (!row || !(await secretMatches(input.secret, row.secret_hash))) return undefined;
  return operatorOf(row);
}

export async function findOperator(db: Queryable, operatorId: string): Promise<Operator | undefined> {
  const { rows } = await db.query<OperatorRow>("SELECT operator_id, tenant_id, name, role, secret_hash FROM operator WHERE operator_id = $1", [operatorId]);
  return rows[0] ? operatorOf(rows[0]) : undefined;
}

/** The amount above which a decision needs a second approver; undefined: no four eyes for the tenant. */
export async function fourEyesAboveMinor(db: Queryable, tenantId: string): Promise<bigint | undefined> {
  const { rows } = await db.query<{ above_amount_minor: string }>("SELECT above_amount_minor FROM tenant_four_eyes WHERE tenant_id = $1", [tenantId]);
  return rows[0] ? BigInt(rows[0].above_amount_minor) : undefined;
}

/** True when a decision moving `amountMinor` needs a second approver: strictly above the tenant's four-eyes amount. */
export async function needsSecondApprover(db: Queryable, tenantId: string, amountMinor: bigint): Promise<boolean> {
  const above = await fourEyesAboveMinor(db, tenantId);
  return above !== undefined && amountMinor > above;
}

export async function setFourEyesAboveMinor(db: Queryable, tenantId: string, aboveMinor: bigint): Promise<void> {
  await db.query(`INSERT INTO tenant_four_eyes (tenant_id, above_amount_minor) VALUES ($1, $2)
    ON CONFLICT (tenant_id) DO UPDATE SET above_amount_minor = EXCLUDED.above_amount_minor, updated_at = now()`, [tenantId, aboveMinor.toString()]);
}
