import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommitOutcomeUnknown } from "../../src/db/commit-outcome.ts";
import { isCommitOutcomeUnknown, isDatabaseUnavailable } from "../../src/db/failure-kind.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { ApiClient } from "../support/api-client.ts";
import { fund, givenApiWorld, ledgerCounts, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { startCommitCutProxy, type CommitCutProxy } from "../support/commit-cut-proxy.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

// Decision 0078: a connection that dies after COMMIT was sent is an unknown outcome, never
// "nothing was stored"; one that dies before it stored nothing.

let db: TestDatabase;
let proxy: CommitCutProxy;
let proxied: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`CREATE TABLE commit_probe (id text PRIMARY KEY)`);
  // A trigger run at COMMIT that waits for an advisory lock the test holds: a COMMIT in flight.
  await db.pool.query(`CREATE FUNCTION commit_probe_wait() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id LIKE 'wait-%' THEN PERFORM pg_advisory_xact_lock(780078); END IF;
      IF NEW.id LIKE 'refuse-%' THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514'; END IF;
      RETURN NULL;
    END $$`);
  await db.pool.query(`CREATE CONSTRAINT TRIGGER commit_probe_at_commit AFTER INSERT ON commit_probe
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_probe_wait()`);
  proxy = await startCommitCutProxy(db.url);
  proxied = createPool(proxy.url, { max: 4 });
});

afterAll(async () => {
  await proxied.end();
  await proxy.close();
  await db.drop();
});

const stored = async (id: string) =>
  (await db.pool.query("SELECT 1 FROM commit_probe WHERE id = $1", [id])).rowCount === 1;

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the work succeeded");
}

describe("a connection lost around COMMIT", () => {
  it("a checked-out client whose backend is terminated does not crash the process and is discarded", async () => {
    const pool = createPool(db.url, { max: 1 });
    try {
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
      // Still checked out when its socket closes: the client emits 'error', which no pool
      // listener catches while it is out.
      await eventually(async () => /not queryable/.test(String(await failureOf(client.query("SELECT 1")))));
      // As withTransaction does with a client whose ROLLBACK failed; its socket closing later
      // must raise no unhandled 'error' (vitest fails the run on one).
      client.release(true);
      // The pool's one slot is free again and the next checkout is a new, working connection.
      const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(rows[0]?.pid).not.toBe(pid);
    } finally {
      await pool.end();
    }
  });

  it("an answer to COMMIT that never arrives is an unknown outcome, though the row was stored", async () => {
    const id = `cut-${randomUUID()}`;
    proxy.armCutAfterCommit();
    const failure = await failureOf(withTransaction(proxied, async (tx) => {
      await tx.query("INSERT INTO commit_probe (id) VALUES ($1)", [id]);
    }));
    expect(proxy.cuts).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(CommitOutcomeUnknown);
    expect((failure as CommitOutcomeUnknown).reason).toBe("connection_lost");
    expect(await stored(id)).toBe(true);
  });

  it("a backend terminated while its COMMIT runs is an unknown outcome, though nothing was stored", async () => {
    const id = `wait-${randomUUID()}`;
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(780078)");
      const pool = createPool(db.url, { max: 1, applicationName: "commit-outcome-victim" });
      try {
        const running = failureOf(withTransaction(pool, async (tx) => {
          await tx.query("INSERT INTO commit_probe (id) VALUES ($1)", [id]);
        }));
        // Waits for the COMMIT to be blocked in its trigger, then kills its backend.
        await eventually(async () => (await db.pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'commit-outcome-victim' AND wait_event_type = 'Lock'`)).rowCount === 1);
        const failure = await running;
        expect(isCommitOutcomeUnknown(failure)).toBe(true);
      } finally {
        await pool.end();
      }
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect(await stored(id)).toBe(false);
  });

  it("a connection lost before COMMIT was sent stored nothing and says so", async () => {
    const id = `early-${randomUUID()}`;
    const pool = createPool(db.url, { max: 1 });
    try {
      const failure = await failureOf(withTransaction(pool, async (tx) => {
        await tx.query("INSERT INTO commit_probe (id) VALUES ($1)", [id]);
        await tx.query("SELECT pg_terminate_backend(pg_backend_pid())");
      }));
      expect(isCommitOutcomeUnknown(failure)).toBe(false);
      expect(isDatabaseUnavailable(failure)).toBe(true);
    } finally {
      await pool.end();
    }
    expect(await stored(id)).toBe(false);
  });

  it("a refusal PostgreSQL answers at COMMIT is a refusal, not an unknown outcome", async () => {
    const id = `refuse-${randomUUID()}`;
    const failure = await failureOf(withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO commit_probe (id) VALUES ($1)", [id]);
    }));
    expect(isCommitOutcomeUnknown(failure)).toBe(false);
    expect((failure as { code?: string }).code).toBe("23514");
    expect(await stored(id)).toBe(false);
  });
});

describe("the failures a primary's death brings", () => {
  // Seen in the failover test (test/ha/failover-under-load.test.ts): answered 500 "do not resend"
  // before they were known as a database gone.
  it.each([
    ["57P02", "terminating connection because of crash of another server process"],
    ["EPIPE", "write EPIPE"],
    [undefined, "Client has encountered a connection error and is not queryable"],
  ])("%s (%s) is the database unavailable", (code, message) => {
    expect(isDatabaseUnavailable(Object.assign(new Error(message), code ? { code } : {}))).toBe(true);
  });
});

describe("a payment whose COMMIT answer is lost", () => {
  let world: ApiWorld;
  let client: ApiClient;
  beforeAll(async () => {
    world = await givenApiWorld(proxied, "commit-outcome");
    client = new ApiClient(world.api.baseUrl, world.apiKey).singleSend();
    await fund(client, "alice", "100.00");
  });
  afterAll(async () => {
    proxy.heal();
    await world.api.close();
  });

  it("is answered 503 outcome_unknown with Retry-After while the database is gone, and the retry with its key gives one payment", async () => {
    const before = await ledgerCounts(db.pool, world.tenantId);
    const key = randomUUID();
    const body = paymentRequest(`lost-commit-${key}`, "25.00");
    proxy.armCutAfterCommit({ thenDown: true });
    const first = await client.post("/v1/payments", body, { "idempotency-key": key });
    expect(first.status).toBe(503);
    expect(first.json.code).toBe("outcome_unknown");
    expect(first.headers.get("retry-after")).toBe("2");
    expect(first.json.detail).not.toMatch(/nothing was stored/);
    proxy.heal();
    const retry = await client.post("/v1/payments", body, { "idempotency-key": key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    const after = await ledgerCounts(db.pool, world.tenantId);
    expect(after.transfers - before.transfers).toBe(1);
  });

  it("is resolved by asking when the database is still there: the stored answer, one payment", async () => {
    const before = await ledgerCounts(db.pool, world.tenantId);
    const key = randomUUID();
    proxy.armCutAfterCommit();
    const first = await client.post("/v1/payments", paymentRequest(`asked-${key}`, "5.00"),
      { "idempotency-key": key });
    expect(proxy.cuts).toBeGreaterThan(1);
    expect(first.status).toBe(201);
    const after = await ledgerCounts(db.pool, world.tenantId);
    expect(after.transfers - before.transfers).toBe(1);
  });
});
