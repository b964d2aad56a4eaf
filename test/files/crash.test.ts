import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestFaultPoints, type IngestFaultPoint } from "../../src/files/fault-points.ts";
import { resumeUnfinished } from "../../src/files/pipeline.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, givenTwin, ingest, ledgerLines, noOutcomes, writeGeneratedAch } from "./support.ts";
import { readFileSync } from "node:fs";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

/** `clearline ingest` in a child process, killed by a fault point (or by the test); resolves with how it ended. */
function ingestInChild(env: Record<string, string>, file: string, tenant: string, killAfterMs?: number): Promise<{ code: number | null; signal: string | null }> {
  const child = spawn(process.execPath, [BIN, "ingest", file, "--tenant", tenant, "--json"], { env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", ...env }, stdio: "ignore" });
  if (killAfterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

// Killed at each named fault point, then restarted (files left unfinished are resumed, as `serve`
// does at start, and the operator re-runs the command): the ledger equals one clean run's.
describe("crash safety: killed at every fault point, resumed, the ledger equals one clean run", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let file: string;
  let clean: { lines: string[]; balances: Record<string, bigint> };
  // Two chunks of 2,000 by default: the chunk-level points fire in the second. The full
  // size runs by hand:
  // CLEARLINE_KILL_TEST_ENTRIES=100000 npx vitest run test/files/crash test/files/kill
  const entries = Number(process.env.CLEARLINE_KILL_TEST_ENTRIES ?? 4_000);
  const timeoutMs = Math.max(600_000, entries * 3); // a bound for a hang, scaled to the file, not a speed check

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-crash-")) };
    file = path.join(env.CLEARLINE_HOME ?? "", "payroll.ach");
    await writeGeneratedAch(file, entries, 11);
    const scene = await givenTwin(db.pool, "clean");
    const report = await ingest(db.pool, scene, readFileSync(file), "payroll.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: entries });
    clean = { lines: await ledgerLines(db.pool, scene.tenantId), balances: await balances(db.pool, scene.tenantId) };
  }, timeoutMs);
  afterAll(async () => { await db.drop(); });

  const chunkPoints = new Set<IngestFaultPoint>(["ingest_chunk_after_keys", "ingest_chunk_after_posting", "ingest_chunk_after_outcomes", "ingest_chunk_after_commit"]);
  for (const point of ingestFaultPoints) {
    it(`gives one clean run's ledger after a kill at ${point}`, async () => {
      const tenant = `crash-${point.replaceAll("_", "-")}`;
      const scene = await givenTwin(db.pool, tenant);
      const killed = await ingestInChild({ ...env, CLEARLINE_FAULT_POINT: point, CLEARLINE_FAULT_AFTER: chunkPoints.has(point) ? "2" : "1" }, file, tenant);
      expect(killed.signal).toBe("SIGKILL");
      await resumeUnfinished(db.pool);
      const retried = await ingest(db.pool, scene, readFileSync(file), "payroll.ach");
      expect(retried).toMatchObject({ status: "done", outcomes: { ...noOutcomes, duplicate: entries } });
      expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(clean.lines);
      expect(await balances(db.pool, scene.tenantId)).toEqual(clean.balances);
      const { rows } = await db.pool.query<{ status: string; applied: number }>(
        `SELECT status, applied FROM received_file WHERE tenant_id = $1 ORDER BY received_at
           LIMIT 1`,
        [scene.tenantId]);
      expect(rows).toEqual([{ status: "done", applied: entries }]);
    }, timeoutMs);
  }

  it("answers the rest of a same-bytes file after a kill between its chunks, every record once, nothing posted (decision 0055)", async () => {
    const tenant = "crash-same-bytes";
    const scene = await givenTwin(db.pool, tenant);
    const first = await ingest(db.pool, scene, readFileSync(file), "payroll.ach");
    const killed = await ingestInChild({ ...env, CLEARLINE_FAULT_POINT: "ingest_chunk_after_commit", CLEARLINE_FAULT_AFTER: "1" }, file, tenant);
    expect(killed.signal).toBe("SIGKILL");
    const { rows: [cut] } = await db.pool.query<{ file_id: string; records_done: number; same_bytes_as: string }>(
      `SELECT file_id, records_done, same_bytes_as FROM received_file WHERE tenant_id = $1
         AND status = 'processing'`, [scene.tenantId]);
    expect(cut).toMatchObject({ records_done: 2_000, same_bytes_as: first.file_id });

    await resumeUnfinished(db.pool);
    const { rows } = await db.pool.query<{ status: string; duplicate: number; outcomes: bigint }>(
      `SELECT f.status, f.duplicate, (SELECT count(*) FROM record_outcome o
         WHERE o.tenant_id = f.tenant_id AND o.file_id = f.file_id
         AND o.outcome = 'duplicate') AS outcomes
         FROM received_file f WHERE f.tenant_id = $1
           AND f.file_id = $2`, [scene.tenantId, cut?.file_id]);
    expect(rows).toEqual([{ status: "done", duplicate: entries, outcomes: BigInt(entries) }]);
    expect(await ledgerLines(db.pool, scene.tenantId)).toEqual(clean.lines);
  }, timeoutMs);

  it("passes clearline ledger verify after all of it", async () => {
    const verify = await runCliInProcess(["ledger", "verify"], env);
    expect(verify.exitCode).toBe(0);
  });
});
