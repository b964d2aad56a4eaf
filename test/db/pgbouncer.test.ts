import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { ensurePgBouncer, startPgBouncer, type PgBouncer } from "../support/pgbouncer.ts";
import { startServeProcess } from "../support/serve-process.ts";

// What PgBouncer 1.18 drops when told to ignore them: the settings node-postgres sends for
// clearline's pool.
const clearlineStartupParameters = [
  "options", "statement_timeout", "idle_in_transaction_session_timeout",
];

describe("clearline behind Debian's PgBouncer (docs/decisions/0073)", () => {
  let plain: TestDatabase;          // no settings of its own
  let withRoleSettings: TestDatabase; // clearline's session settings as the database's defaults
  let strict: PgBouncer;            // PgBouncer as installed: refuses unknown startup parameters
  let lenient: PgBouncer;           // told to drop them

  beforeAll(async () => {
    ensurePgBouncer();
    plain = await createTestDatabase();
    withRoleSettings = await createTestDatabase();
    for (const setting of [
      "plan_cache_mode = 'force_generic_plan'",
      `lock_timeout = ${limits.db.sessionLockTimeoutMs}`,
      `statement_timeout = ${limits.db.statementTimeoutMs}`,
    ]) await withRoleSettings.pool.query(`ALTER DATABASE ${withRoleSettings.name} SET ${setting}`);
    const serverUrl = inject("adminDatabaseUrl");
    strict = await startPgBouncer({
      serverUrl, databases: { tx: { dbname: plain.name, poolMode: "transaction" } },
    });
    lenient = await startPgBouncer({
      serverUrl, ignoreStartupParameters: clearlineStartupParameters,
      databases: {
        plain_session: { dbname: plain.name, poolMode: "session" },
        set_tx: { dbname: withRoleSettings.name, poolMode: "transaction" },
        set_session: { dbname: withRoleSettings.name, poolMode: "session" },
      },
    });
  });
  afterAll(async () => {
    await strict?.stop();
    await lenient?.stop();
    await plain?.drop();
    await withRoleSettings?.drop();
  });

  const serve = (url: string) => runCli(["serve", "--http-port", "0"], {
    DATABASE_URL: url,
    CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-pgbouncer-home-")),
  });

  it("refuses to start through transaction pooling as installed (which refuses the settings)",
    async () => {
    const run = await serve(strict.url("tx"));
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("DB_POOLER_REFUSED_SETTINGS");
    expect(run.stderr).toContain("unsupported startup parameter");
  });

  it("refuses to start when the pooler drops clearline's session settings", async () => {
    const run = await serve(lenient.url("plain_session"));
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("DB_SESSION_SETTINGS_MISSING");
    expect(run.stderr).toContain("plan_cache_mode is auto, not force_generic_plan");
  });

  it("refuses to start through transaction pooling even with the settings on the role, naming it",
    async () => {
    const run = await serve(lenient.url("set_tx"));
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("DB_TRANSACTION_POOLING");
    expect(run.stderr).toContain("pool_mode = transaction");
  });

  it("serves through session pooling with the settings on the role", async () => {
    const service = await startServeProcess({
      DATABASE_URL: lenient.url("set_session"), CLEARLINE_FLEET_LEASE_MS: "3000",
    });
    try {
      const ready = await fetch(`${service.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await service.stop();
    }
  });
});
