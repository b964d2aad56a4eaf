import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeUnfinished } from "../../src/files/pipeline.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, givenTwin, ingest, ledgerLines, noOutcomes, writeGeneratedAch } from "./support.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

// kill -9 at random moments during a large file (20,000 entries, ten chunks), twice over, then the
// restart: resume what was left unfinished and re-run the command. The ledger equals one clean run's.
describe(`crash safety: kill -9 at random moments during a ${Number(process.env.CLEARLINE_KILL_TEST_ENTRIES ?? 20_000).toLocaleString("en-US")}-entry file`, () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let file: string;
  // 20,000 keeps the suite's run short; CLEARLINE_KILL_TEST_ENTRIES=100000 runs the full size.
  const entries = Number(process.env.CLEARLINE_KILL_TEST_ENTRIES ?? 20_000);

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-kill-")), CLEARLINE_LOG_LEVEL: "warn" };
    file = path.join(env.CLEARLINE_HOME ?? "", "payroll.ach");
    await writeGeneratedAch(file, entries, 23);
  });
  afterAll(async () => { await db.drop(); });

  it("gives the same transfers and balances as one clean run, and the ledger verifies", async () => {
    const clean = await givenTwin(db.pool, "clean");
    const started = Date.now();
    const cleanReport = await ingest(db.pool, clean, readFileSync(file), "payroll.ach");
    const cleanMs = Date.now() - started;
    expect(cleanReport.outcomes).toEqual({ ...noOutcomes, applied: entries });

    const scene = await givenTwin(db.pool, "killed");
    const delays: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      // Somewhere between process start-up and the end of a clean run's worth of work.
      const delay = 1_000 + Math.floor(Math.random() * (cleanMs + 1_000));
      delays.push(delay);
      const child = spawn(process.execPath, [BIN, "ingest", file, "--tenant", "killed"], { env: { ...process.env, ...env }, stdio: "ignore" });
      const timer = setTimeout(() => child.kill("SIGKILL"), delay);
      await new Promise((resolve) => child.once("exit", resolve));
      clearTimeout(timer);
    }
    await resumeUnfinished(db.pool);
    const retried = await ingest(db.pool, scene, readFileSync(file), "payroll.ach");
    expect(retried.status, `killed after ${delays.join(" ms, ")} ms`).toBe("done");
    expect(retried.outcomes.applied + retried.outcomes.duplicate).toBe(entries);
    expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(await ledgerLines(db.pool, clean.tenantId));
    expect(await balances(db.pool, scene.tenantId)).toEqual(await balances(db.pool, clean.tenantId));
    const { rows } = await db.pool.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM received_file WHERE tenant_id = $1
         AND status NOT IN ('done', 'rejected')`,
      [scene.tenantId]);
    expect(rows[0]?.n).toBe(0n);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  }, 600_000);
});
