import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateOperator, fourEyesAboveMinor } from "../../src/operators/operators.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenTenant } from "../support/api-server.ts";

describe("clearline operator", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let tenantId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    ({ tenantId } = await givenTenant(db.pool, "acme"));
  });
  afterAll(() => db.drop());

  it("add prints the secret once; only a scrypt hash is stored, and the secret signs in", async () => {
    const run = await runCli(["operator", "add", "olga", "--tenant", "acme", "--role", "approver", "--json"], env);
    expect(run.exitCode).toBe(0);
    const printed = JSON.parse(run.stdout) as { secret: string; role: string; tenant_id: string };
    expect(printed).toMatchObject({ role: "approver", tenant_id: tenantId });
    const { rows } = await db.pool.query<{ secret_hash: string }>("SELECT secret_hash FROM operator WHERE name = 'olga'");
    expect(rows[0]?.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(rows[0]?.secret_hash).not.toContain(printed.secret);
    expect(await authenticateOperator(db.pool, { tenant: "acme", name: "olga", secret: printed.secret })).toMatchObject({ name: "olga", role: "approver" });
    expect(await authenticateOperator(db.pool, { tenant: "acme", name: "olga", secret: "op_wrong" })).toBeUndefined();
  });

  it("add refuses an unknown role with exit code 2 and creates nothing", async () => {
    const run = await runCli(["operator", "add", "pat", "--tenant", "acme", "--role", "root"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/OPERATOR_ROLE_INVALID/);
    expect((await db.pool.query("SELECT 1 FROM operator WHERE name = 'pat'")).rows).toHaveLength(0);
  });

  it("four-eyes sets the tenant's amount", async () => {
    expect((await runCli(["operator", "four-eyes", "--tenant", "acme", "--above", "10000"], env)).exitCode).toBe(0);
    expect(await fourEyesAboveMinor(db.pool, tenantId)).toBe(10_000n);
  });
});
