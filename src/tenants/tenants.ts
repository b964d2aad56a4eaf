import { createHash, randomBytes } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import { sqlState } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";

export interface Tenant {
  tenantId: string;
  name: string;
}

export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

/**
 * Creates a tenant and its API key. The key is returned once and only its hash is stored, so a
 * leaked database does not leak working keys.
 */
export async function createTenant(db: Queryable, name: string): Promise<Result<Tenant & { apiKey: string }, Finding>> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name)) {
    return fail(finding("TENANT_NAME_INVALID", "a tenant name is 1 to 63 letters, digits, '.', '_' or '-'", { field: "name" }));
  }
  const tenantId = `ten_${randomBytes(10).toString("hex")}`;
  const apiKey = `cl_${randomBytes(32).toString("base64url")}`;
  try {
    await db.query("INSERT INTO tenant (tenant_id, name, api_key_hash) VALUES ($1, $2, $3)", [tenantId, name, hashApiKey(apiKey)]);
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

/** API key -> tenant, cached briefly and boundedly: every request authenticates. */
export class TenantAuthenticator {
  private readonly cache = new Map<string, { tenant: Tenant; expiresAtMs: number }>();
  constructor(private readonly db: Queryable, private readonly now: () => number = Date.now) {}

  async authenticate(apiKey: string): Promise<Tenant | undefined> {
    const hash = hashApiKey(apiKey);
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAtMs > this.now()) return cached.tenant;
    const { rows } = await this.db.query<{ tenant_id: string; name: string }>("SELECT tenant_id, name FROM tenant WHERE api_key_hash = $1", [hash]);
    const row = rows[0];
    if (!row) return undefined;
    const tenant = { tenantId: row.tenant_id, name: row.name };
    if (this.cache.size >= limits.http.tenantCacheEntriesMax) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(hash, { tenant, expiresAtMs: this.now() + limits.http.tenantCacheTtlMs });
    return tenant;
  }
}
