import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { runCliInProcess, runSchemeSim } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { testPan } from "./support.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("clearline card add, serve --iso8583-port and the scheme simulator", () => {
  let db: TestDatabase;
  let home: string;
  let env: Record<string, string>;
  let serve: ChildProcess | undefined;
  const pan = testPan("455600", 11);

  beforeAll(async () => {
    db = await createTestDatabase();
    home = mkdtempSync(path.join(tmpdir(), "clearline-card-cli-"));
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: home };
    const tenant = await createTenant(db.pool, "cli-issuer");
    if (!tenant.ok) throw new Error(tenant.error.message);
    await withTransaction(db.pool, async (tx) => {
      await openAccount(tx, { tenantId: tenant.value.tenantId, accountId: "cust-9", kind: "customer", currency: "EUR" });
      await openAccount(tx, { tenantId: tenant.value.tenantId, accountId: "bank", kind: "settlement", currency: "EUR" });
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ($1, 'fund', 'funding', '2026-12-01')", [tenant.value.tenantId]);
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
        VALUES ($1, 'fund#0', 'fund', 'bank', 'D', 10000, 'EUR', '2026-12-01'), ($1, 'fund#1', 'fund', 'cust-9', 'C', 10000, 'EUR', '2026-12-01')`, [tenant.value.tenantId]);
    });
  });
  afterAll(async () => {
    if (serve && serve.exitCode === null) serve.kill("SIGKILL");
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it("links a card by name of tenant, prints it masked, and creates the card hash key with mode 0600", async () => {
    const run = await runCliInProcess(["card", "add", "--tenant", "cli-issuer", "--pan", pan, "--account", "cust-9"], env);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(`455600******${pan.slice(-4)}`);
    expect(run.stdout + run.stderr).not.toContain(pan);
    expect(statSync(path.join(home, "card-hash.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses a PAN with a bad check digit with exit code 2", async () => {
    const bad = pan.slice(0, -1) + String((Number(pan.slice(-1)) + 1) % 10);
    const run = await runCliInProcess(["card", "add", "--tenant", "cli-issuer", "--pan", bad, "--account", "cust-9"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("ISO8583_CARD_PAN_INVALID");
  });

  it("serves the scheme endpoint on --iso8583-port, where scheme-sim's authorization, repeat and reversal are answered", async () => {
    const port = await freePort();
    serve = spawn(process.execPath, [BIN, "serve", "--http-port", "0", "--iso8583-port", String(port)], {
      env: { ...process.env, ...env, CLEARLINE_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      let seen = "";
      serve?.stderr?.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes("serving on")) resolve();
      });
      serve?.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${seen}`)));
    });
    const run = await runSchemeSim(["send", "--port", String(port), "--pan", pan, "--amount", "2500", "--sign-on", "--repeat", "--reverse", "--stan", "500", "--currency", "978"], env);
    expect(run.exitCode).toBe(0);
    const received = run.stdout.trim().split("\n").map((line) => JSON.parse(line)).filter((m) => m.direction === "received");
    expect(received.map((m) => `${m.mti}/${m.fields["39"]}`)).toEqual(["0810/00", "0110/00", "0110/00", "0410/00", "0410/00"]);
    expect(run.stdout).not.toContain(pan);
    serve.kill("SIGINT");
  });
});
