import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { sqlState } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { apiKeyScopes, mintApiKey } from "./api-keys.ts";

export { hashApiKey } from "./api-keys.ts";

export interface Tenant {
  tenantId: string;
  name: string;
}

/**
 * Creates a tenant and its first API key, named "default", with every scope that changes
 * something. The key is returned once and only its hash is stored, so a leaked database does not
 * leak working keys. The hash is also kept on the tenant row, where the release before 0033
 * looks keys up (a rolling upgrade; decision 0097).
 */
export async function createTenant(db: Queryable, name: string): Promise<Result<Tenant & { apiKey: string }, Finding>> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name)) {
    return fail(finding("TENANT_NAME_INVALID", "a tenant name is 1 to 63 letters, digits, '.', '_' or '-'", { field: "name" }));
  }
  const tenantId = `ten_${randomBytes(10).toString("hex")}`;
  const key = mintApiKey();
  const apiKey = key.apiKey;
  const scopes = apiKeyScopes.filter((scope) => scope !== "read_only");
  try {
    // One statement: the tenant and its key commit together.
    await db.query(
      `WITH made AS (
         INSERT INTO tenant (tenant_id, name, api_key_hash) VALUES ($1, $2, $3) RETURNING tenant_id)
       INSERT INTO api_key (tenant_id, key_id, name, key_prefix, key_hash, scopes)
       SELECT tenant_id, $4, 'default', $5, $3, $6 FROM made`,
      [tenantId, name, key.hash, key.keyId, key.prefix, scopes]);
  } catch (error) {
    if (sqlState(error) === "23505") return fail(finding("TENANT_EXISTS", `a tenant named ${name} exists`, { field: "name" }));
    throw error;
  }
  return ok({ tenantId, name, apiKey });
}

/** A tenant by its id or its name (operators type names; machines pass ids). */
export async function findTenant(db: Queryable, idOrName: string): Promise<Tenant | undefined> {
  const { rows } = await db.query<{ tenant_id: string; name: string }>(
    "SELECT tenant_id, name FROM tenant WHERE tenant_id = $1 OR name = $1 ORDER BY tenant_id = $1 DESC LIMIT 1",
    [idOrName],
  );
  const row = rows[0];
  return row ? { tenantId: row.tenant_id, name: row.name } : undefined;
}

/** The ids of the tenants with this id or this name (a name may be another tenant's id). */
export async function tenantIdsNamed(db: Queryable, idOrName: string): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    "SELECT tenant_id FROM tenant WHERE tenant_id = $1 OR name = $1", [idOrName]);
  return rows.map((r) => r.tenant_id);
}
