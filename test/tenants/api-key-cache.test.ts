import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { createTenant, TenantAuthenticator } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * The API key cache (src/tenants/tenants.ts) bounds how long a revoked key keeps working:
 * limits.http.tenantCacheTtlMs after its last lookup, never longer. The clock is the
 * authenticator's injected one, so the test steps it instead of waiting.
 */
describe("API key cache", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  async function givenTenant(name: string): Promise<{ tenantId: string; apiKey: string }> {
    const created = await createTenant(db.pool, name);
    if (!created.ok) throw new Error(created.error.message);
    return created.value;
  }

  it("refuses a revoked key once tenantCacheTtlMs has passed since its lookup", async () => {
    let nowMs = 1_000_000;
    const authenticator = new TenantAuthenticator(db.pool, () => nowMs);
    const tenant = await givenTenant("revoked-later");
    expect(await authenticator.authenticate(tenant.apiKey)).toMatchObject({ tenantId: tenant.tenantId });

    // Revocation is a change of the stored hash (or the tenant's removal): the key no longer matches.
    await db.pool.query("UPDATE tenant SET api_key_hash = 'revoked:' || tenant_id WHERE tenant_id = $1", [tenant.tenantId]);
    nowMs += limits.http.tenantCacheTtlMs - 1;
    expect(await authenticator.authenticate(tenant.apiKey)).toMatchObject({ tenantId: tenant.tenantId });
    nowMs += 1;
    expect(await authenticator.authenticate(tenant.apiKey)).toBeUndefined();
  });

  it("does not cache a refusal: an unknown key is looked up again on the next request", async () => {
    const authenticator = new TenantAuthenticator(db.pool, () => 0);
    const tenant = await givenTenant("restored");
    await db.pool.query("UPDATE tenant SET api_key_hash = 'revoked:' || tenant_id WHERE tenant_id = $1", [tenant.tenantId]);
    expect(await authenticator.authenticate(tenant.apiKey)).toBeUndefined();
    await db.pool.query("UPDATE tenant SET api_key_hash = encode(sha256($2::bytea), 'hex') WHERE tenant_id = $1", [tenant.tenantId, tenant.apiKey]);
    expect(await authenticator.authenticate(tenant.apiKey)).toMatchObject({ tenantId: tenant.tenantId });
  });
});
