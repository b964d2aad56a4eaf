import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommitOutcomeUnknown } from "../../src/db/commit-outcome.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { limits } from "../../src/config/limits.ts";
import { eventually } from "../support/eventually.ts";

// Decision 0078 on a PostgreSQL of its own whose commits wait for a synchronous standby that never
// comes (synchronous_standby_names names nobody): what a primary under synchronous_mode_strict
// does with no standby left. The machine's shared server is not touched.
const home = mkdtempSync(path.join(tmpdir(), "clearline-syncrep-"));
let server: EmbeddedDatabase;
let admin: Pool;

beforeAll(async () => {
  server = await startEmbeddedPostgres(home);
  admin = createPool(server.url, { max: 2 });
  await admin.query("CREATE TABLE IF NOT EXISTS sync_probe (id text PRIMARY KEY)");
  // From here every commit that writes waits; the admin pool only reads and cancels.
  await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'nobody'");
  await admin.query("SELECT pg_reload_conf()");
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the work succeeded");
}

/** The pid of a backend of `application` waiting for the synchronous standby. */
async function waitingOnStandby(application: string): Promise<number> {
  let pid: number | undefined;
  await eventually(async () => {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'SyncRep'`,
      [application]);
    pid = rows[0]?.pid;
    return pid !== undefined;
  });
  return pid as number;
}

describe("a COMMIT waiting for a synchronous standby", () => {
  it("that PostgreSQL answers with success and the replication warning is an unknown outcome", async () => {
    const application = `syncrep-cancel-${randomUUID().slice(0, 8)}`;
    const pool = createPool(server.url, { max: 1, applicationName: application });
    try {
      const id = randomUUID();
      const running = failureOf(withTransaction(pool, async (tx) => {
        await tx.query("INSERT INTO sync_probe (id) VALUES ($1)", [id]);
      }));
      await admin.query("SELECT pg_cancel_backend($1)", [await waitingOnStandby(application)]);
      const failure = await running;
      expect(failure).toBeInstanceOf(CommitOutcomeUnknown);
      expect((failure as CommitOutcomeUnknown).reason).toBe("not_replicated");
      // Committed on this one server only: what a failover would lose.
      const { rowCount } = await admin.query("SELECT 1 FROM sync_probe WHERE id = $1", [id]);
      expect(rowCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("past the commit deadline is an unknown outcome, its connection closed, its backend still waiting",
    async () => {
      const application = `syncrep-deadline-${randomUUID().slice(0, 8)}`;
      const pool = createPool(server.url, { max: 1, applicationName: application });
      try {
        const startedMs = Date.now();
        const failure = await failureOf(withTransaction(pool, async (tx) => {
          await tx.query("INSERT INTO sync_probe (id) VALUES ($1)", [randomUUID()]);
        }));
        expect(failure).toBeInstanceOf(CommitOutcomeUnknown);
        expect((failure as CommitOutcomeUnknown).reason).toBe("deadline");
        expect(Date.now() - startedMs).toBeGreaterThanOrEqual(limits.db.commitWaitMs);
        // Never cancelled (that would commit it locally only): the backend waits for a standby.
        const pid = await waitingOnStandby(application);
        expect(pid).toBeGreaterThan(0);
        // The pool's one slot is free for the next request, on a new connection.
        const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        expect(rows[0]?.pid).not.toBe(pid);
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      } finally {
        await pool.end();
      }
    }, limits.db.commitWaitMs + 30_000);
});
