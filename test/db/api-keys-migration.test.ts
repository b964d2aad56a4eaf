import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { hashApiKey, listApiKeys } from "../../src/tenants/api-keys.ts";
import { TenantAuthenticator } from "../../src/tenants/key-authenticator.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

/** The migration files up to `last`. */
function migrationsUpTo(last: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const file of readdirSync(dir)) if (Number(file.slice(0, 4)) > last) rmSync(path.join(dir, file));
  return dir;
}

/**
 * Migration 0033 (decision 0097): the key a tenant had before it keeps working after it, as the
 * tenant's key "default" with the three scopes that change something, and is still on the tenant
 * row for the processes of the release before.
 */
describe("migration 0033 and a tenant's key from before it", () => {
  let db: TestDatabase;
  const apiKey = "cl_made-by-the-release-before-0033";
  beforeAll(async () => {
    db = await createEmptyDatabase();
    const before = migrationsUpTo(32);
    await migrate(db.pool, before);
    rmSync(before, { recursive: true, force: true });
    await db.pool.query("INSERT INTO tenant (tenant_id, name, api_key_hash) VALUES ('ten_old', 'old', $1)",
      [hashApiKey(apiKey)]);
    await migrate(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("keeps the key working, named default, with payments, files and operations", async () => {
    expect(await new TenantAuthenticator(db.pool).authenticate(apiKey)).toMatchObject({
      tenant: { tenantId: "ten_old", name: "old" }, scopes: ["payments", "files", "operations"],
    });
    expect(await listApiKeys(db.pool, "ten_old")).toMatchObject([
      { name: "default", prefix: null, state: "active", scopes: ["payments", "files", "operations"] },
    ]);
    const { rows } = await db.pool.query("SELECT api_key_hash FROM tenant WHERE tenant_id = 'ten_old'");
    expect(rows[0]?.api_key_hash).toBe(hashApiKey(apiKey));
  });
});
