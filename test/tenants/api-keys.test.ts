import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import {
  createApiKey, hashApiKey, listApiKeys, revokeApiKey, rotateApiKey,
} from "../../src/tenants/api-keys.ts";
import { TenantAuthenticator } from "../../src/tenants/key-authenticator.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * A tenant's API keys (src/tenants/api-keys.ts, decision 0097): named, scoped, stored as a hash,
 * listed by prefix, revoked, rotated with an overlap window. The authenticator here never starts
 * listening, so it caches nothing and every answer is the database's.
 */
describe("API keys", () => {
  let db: TestDatabase;
  let authenticator: TenantAuthenticator;
  beforeAll(async () => {
    db = await createTestDatabase();
    authenticator = new TenantAuthenticator(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  async function givenTenant(name: string): Promise<{ tenantId: string; apiKey: string }> {
    const created = await createTenant(db.pool, name);
    if (!created.ok) throw new Error(created.error.message);
    return created.value;
  }
  async function givenKey(tenantId: string, name: string, scopes: string[]) {
    const created = await createApiKey(db.pool, tenantId, { name, scopes });
    if (!created.ok) throw new Error(created.error.message);
    return created.value;
  }

  it("gives a new tenant one key named default that changes payments, files and operations", async () => {
    const tenant = await givenTenant("first-key");
    const keys = await listApiKeys(db.pool, tenant.tenantId);
    expect(keys).toMatchObject([{ name: "default", scopes: ["payments", "files", "operations"], state: "active" }]);
    expect(await authenticator.authenticate(tenant.apiKey)).toMatchObject({
      tenant: { tenantId: tenant.tenantId }, keyId: keys[0]?.keyId,
    });
  });

  it("lists a key by its prefix and stores only its hash, never the key", async () => {
    const tenant = await givenTenant("by-prefix");
    const made = await givenKey(tenant.tenantId, "reporting", ["read_only"]);
    const listed = (await listApiKeys(db.pool, tenant.tenantId)).find((k) => k.keyId === made.key.keyId);
    expect(listed?.prefix).toBe(made.apiKey.slice(0, 12));
    expect(JSON.stringify(listed)).not.toContain(made.apiKey);
    const { rows } = await db.pool.query<Record<string, unknown>>(
      "SELECT * FROM api_key WHERE key_id = $1", [made.key.keyId]);
    expect(rows[0]?.key_hash).toBe(hashApiKey(made.apiKey));
    expect(JSON.stringify(rows[0])).not.toContain(made.apiKey);
  });

  it("refuses a name or scopes outside the catalog, read_only with another scope included", async () => {
    const tenant = await givenTenant("bad-requests");
    const codes = await Promise.all([
      createApiKey(db.pool, tenant.tenantId, { name: "has space", scopes: ["payments"] }),
      createApiKey(db.pool, tenant.tenantId, { name: "ok", scopes: [] }),
      createApiKey(db.pool, tenant.tenantId, { name: "ok", scopes: ["admin"] }),
      createApiKey(db.pool, tenant.tenantId, { name: "ok", scopes: ["read_only", "payments"] }),
    ]);
    expect(codes.map((r) => (r.ok ? "ok" : r.error.code))).toEqual([
      "API_KEY_NAME_INVALID", "API_KEY_SCOPES_INVALID", "API_KEY_SCOPES_INVALID", "API_KEY_SCOPES_INVALID",
    ]);
  });

  it("refuses a revoked key, named by its prefix, and keeps the tenant's other keys working", async () => {
    const tenant = await givenTenant("revoking");
    const made = await givenKey(tenant.tenantId, "ci", ["payments"]);
    const revoked = await revokeApiKey(db.pool, tenant.tenantId, made.key.prefix ?? "");
    expect(revoked).toMatchObject({ ok: true, value: { keyId: made.key.keyId, state: "revoked" } });
    expect(await authenticator.authenticate(made.apiKey)).toBeUndefined();
    expect(await authenticator.authenticate(tenant.apiKey)).toBeDefined();
    expect(await revokeApiKey(db.pool, tenant.tenantId, "key_none")).toMatchObject({
      ok: false, error: { code: "API_KEY_UNKNOWN" },
    });
  });

  it("does not let one tenant revoke another's key", async () => {
    const owner = await givenTenant("owner");
    const other = await givenTenant("other");
    const made = await givenKey(owner.tenantId, "mine", ["files"]);
    expect(await revokeApiKey(db.pool, other.tenantId, made.key.keyId)).toMatchObject({
      ok: false, error: { code: "API_KEY_UNKNOWN" },
    });
    expect(await authenticator.authenticate(made.apiKey)).toBeDefined();
  });

  it("keeps a rotated key working in its overlap window and refuses it after", async () => {
    const tenant = await givenTenant("rotating");
    const made = await givenKey(tenant.tenantId, "checkout", ["payments", "files"]);
    const rotated = await rotateApiKey(db.pool, tenant.tenantId, made.key.keyId, 3_600_000);
    if (!rotated.ok) throw new Error(rotated.error.message);
    expect(rotated.value.old).toMatchObject({ state: "expiring", replacedBy: rotated.value.created.key.keyId });
    expect(rotated.value.created.key).toMatchObject({ name: "checkout", scopes: ["payments", "files"] });
    expect(await authenticator.authenticate(made.apiKey)).toMatchObject({ keyId: made.key.keyId });
    expect(await authenticator.authenticate(rotated.value.created.apiKey)).toBeDefined();

    // The window ends (as the clock would end it).
    await db.pool.query("UPDATE api_key SET expires_at = now() - interval '1 ms' WHERE key_id = $1",
      [made.key.keyId]);
    expect(await authenticator.authenticate(made.apiKey)).toBeUndefined();
    expect(await authenticator.authenticate(rotated.value.created.apiKey)).toBeDefined();
    const states = (await listApiKeys(db.pool, tenant.tenantId)).map((k) => [k.keyId, k.state]);
    expect(states).toContainEqual([made.key.keyId, "expired"]);
  });

  it("rotates with no overlap: the old key is refused at once", async () => {
    const tenant = await givenTenant("no-overlap");
    // A key is named by its id or prefix, not by its name (a rotation keeps the name).
    expect(await rotateApiKey(db.pool, tenant.tenantId, "default", 0)).toMatchObject({
      ok: false, error: { code: "API_KEY_UNKNOWN" },
    });
    const [key] = await listApiKeys(db.pool, tenant.tenantId);
    const now = await rotateApiKey(db.pool, tenant.tenantId, key?.keyId ?? "", 0);
    expect(now.ok).toBe(true);
    expect(await authenticator.authenticate(tenant.apiKey)).toBeUndefined();
  });

  it("refuses to rotate a key twice, a revoked key, or past the overlap bound", async () => {
    const tenant = await givenTenant("rotate-refusals");
    const made = await givenKey(tenant.tenantId, "twice", ["operations"]);
    expect((await rotateApiKey(db.pool, tenant.tenantId, made.key.keyId, 60_000)).ok).toBe(true);
    expect(await rotateApiKey(db.pool, tenant.tenantId, made.key.keyId, 60_000)).toMatchObject({
      ok: false, error: { code: "API_KEY_ROTATED" },
    });
    const gone = await givenKey(tenant.tenantId, "gone", ["operations"]);
    await revokeApiKey(db.pool, tenant.tenantId, gone.key.keyId);
    expect(await rotateApiKey(db.pool, tenant.tenantId, gone.key.keyId, 60_000)).toMatchObject({
      ok: false, error: { code: "API_KEY_REVOKED" },
    });
    const bound = await givenKey(tenant.tenantId, "bound", ["operations"]);
    const past = await rotateApiKey(db.pool, tenant.tenantId, bound.key.keyId, limits.http.apiKeyOverlapMsMax + 1);
    expect(past).toMatchObject({ ok: false, error: { code: "API_KEY_OVERLAP_INVALID" } });
    expect((await rotateApiKey(db.pool, tenant.tenantId, bound.key.keyId, limits.http.apiKeyOverlapMsMax)).ok)
      .toBe(true);
  });

  it("refuses the revoked first key on the tenant row too, where the release before 0033 reads it", async () => {
    const tenant = await givenTenant("older-release");
    const [key] = await listApiKeys(db.pool, tenant.tenantId);
    await revokeApiKey(db.pool, tenant.tenantId, key?.keyId ?? "");
    const { rows } = await db.pool.query("SELECT api_key_hash FROM tenant WHERE tenant_id = $1", [tenant.tenantId]);
    expect(rows[0]?.api_key_hash).toBeNull();
  });
});
