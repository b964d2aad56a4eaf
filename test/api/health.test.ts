import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { limits } from "../../src/config/limits.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { projectionLagDeltas } from "../../src/observability/metrics.ts";
import { startService, type RunningService } from "../../src/service.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenScene } from "../files/support.ts";
import { newKeyPair } from "../support/sftp-server.ts";

const quiet = createLogger({ destination: new Writable({ write(_chunk, _encoding, done) { done(); } }) });

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function readyz(service: RunningService): Promise<{ status: number; body: { status: string; checks: Record<string, { ok: boolean; reason?: string }> } }> {
  const response = await fetch(`${service.httpUrl}/readyz`);
  return { status: response.status, body: await response.json() as never };
}

function startWith(env: Record<string, string>): Promise<RunningService> {
  const config = loadConfig({ CLEARLINE_HTTP_PORT: "0", CLEARLINE_LOG_LEVEL: "fatal", ...env });
  if (!config.ok) throw new Error(config.errors.map((e) => e.message).join("; "));
  return startService(config.value, quiet);
}

describe("/livez, /readyz and clearline status", () => {
  let db: TestDatabase;
  const homes: string[] = [];
  const newHome = () => {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-health-"));
    homes.push(home);
    return home;
  };
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => {
    await db.drop();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  it("is ready, and says so check by check, when everything configured works", async () => {
    const service = await startWith({ DATABASE_URL: db.url, CLEARLINE_HOME: newHome() });
    try {
      expect((await fetch(`${service.httpUrl}/livez`)).status).toBe(200);
      expect((await fetch(`${service.httpUrl}/healthz`)).status).toBe(200);
      const ready = await readyz(service);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: "ready", checks: { database: { ok: true }, migrations: { ok: true }, sources: { ok: true }, projection_lag: { ok: true } } });
      const status = await runCliInProcess(["status", "--json", "--url", service.httpUrl]);
      expect(status.exitCode).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ live: true, status: "ready", checks: ready.body.checks });
    } finally {
      await service.stop();
    }
  });

  it("is not ready while every SFTP poll fails and the scheme link is down, naming each reason; /livez and /healthz still answer", async () => {
    const scene = await givenScene(db.pool, "health-sftp");
    const home = newHome();
    const keyFile = path.join(home, "id_ecdsa");
    writeFileSync(keyFile, newKeyPair().private, { mode: 0o600 });
    const [sftpPort, schemePort] = [await closedPort(), await closedPort()];
    writeFileSync(path.join(home, "config.json"), JSON.stringify({
      sftpPartners: [{
        tenant: "health-sftp", partner: scene.partner.name, host: "127.0.0.1", port: sftpPort, username: "clearline", privateKeyPath: keyFile,
        hostKeySha256: `SHA256:${"A".repeat(43)}`, inbox: "/inbox", archive: "/archive", pollIntervalMs: 100,
      }],
    }));
    const service = await startWith({
      DATABASE_URL: db.url, CLEARLINE_HOME: home,
      CLEARLINE_ISO8583_OUTBOUND_HOST: "127.0.0.1", CLEARLINE_ISO8583_OUTBOUND_PORT: String(schemePort), CLEARLINE_ISO8583_ACQUIRER_ID: "123456",
    });
    try {
      let ready = await readyz(service);
      while (!/consecutive polls failed/.test(ready.body.checks.sources?.reason ?? "")) {
        await sleep(50);   // the first poll's failure is the event waited for
        ready = await readyz(service);
      }
      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe("not_ready");
      expect(ready.body.checks.database).toEqual({ ok: true });
      expect(ready.body.checks.sources?.reason).toContain(`SFTP partner ${scene.partner.name} (127.0.0.1:${sftpPort})`);
      expect(ready.body.checks.scheme_link).toEqual({ ok: false, reason: expect.stringContaining(`127.0.0.1:${schemePort} is not signed on`) });
      expect((await fetch(`${service.httpUrl}/livez`)).status).toBe(200);
      expect((await fetch(`${service.httpUrl}/healthz`)).status).toBe(200);

      const status = await runCliInProcess(["status", "--url", service.httpUrl]);
      expect(status.exitCode).toBe(1);
      expect(status.stdout).toMatch(/^not ready \(http/);
      expect(status.stdout).toMatch(/FAILING sources: SFTP partner/);
      expect(status.stdout).toMatch(/FAILING scheme_link: /);
      expect(status.stdout).toMatch(/ok {6}database/);
    } finally {
      await service.stop();
    }
  });

  it("is not ready while a migration is not applied, naming it", async () => {
    const service = await startWith({ DATABASE_URL: db.url, CLEARLINE_HOME: newHome() });
    const { rows } = await db.pool.query<{ version: number; name: string; checksum: string }>("DELETE FROM schema_migration WHERE version = (SELECT max(version) FROM schema_migration) RETURNING version, name, checksum");
    try {
      const ready = await readyz(service);
      expect(ready.status).toBe(503);
      expect(ready.body.checks.migrations?.reason).toMatch(new RegExp(`not applied: ${String(rows[0]?.version).padStart(4, "0")}_`));
    } finally {
      await db.pool.query("INSERT INTO schema_migration (version, name, checksum) VALUES ($1, $2, $3)", [rows[0]?.version, rows[0]?.name, rows[0]?.checksum]);
      await service.stop();
    }
  });

  it(`is not ready when a tenant's projection lags ${limits.ledger.projectionLagDeltasMax + 1} delta rows, one past the bound, naming the tenant`, async () => {
    const service = await startWith({ DATABASE_URL: db.url, CLEARLINE_HOME: newHome() });
    try {
      // The gauge the projection job sets at each advance is what the check reads.
      projectionLagDeltas.set({ tenant: "lagging-tenant" }, limits.ledger.projectionLagDeltasMax);
      expect((await readyz(service)).body.checks.projection_lag).toEqual({ ok: true });
      projectionLagDeltas.set({ tenant: "lagging-tenant" }, limits.ledger.projectionLagDeltasMax + 1);
      const ready = await readyz(service);
      expect(ready.status).toBe(503);
      expect(ready.body.checks.projection_lag?.reason).toMatch(/tenant lagging-tenant is 100001 unfolded balance delta rows behind/);
    } finally {
      projectionLagDeltas.remove({ tenant: "lagging-tenant" });
      await service.stop();
    }
  });

  it("answers a clear line when no service runs at the address", async () => {
    const status = await runCliInProcess(["status", "--json", "--url", `http://127.0.0.1:${await closedPort()}`]);
    expect(status.exitCode).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ live: false, status: "unreachable", reason: expect.stringMatching(/no clearline answers at/) });
  });
});
