import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/pool.ts";
import { StatementParams } from "../../src/db/statement-parts.ts";
import { withTransaction, type Tx } from "../../src/db/transaction.ts";
import { completeBatchPart } from "../../src/idempotency/batch-claims.ts";
import { findRecordsAuditingRepeats } from "../../src/idempotency/records.ts";
import { findAccounts } from "../../src/ledger/accounts.ts";
import { balancesOf } from "../../src/ledger/balance.ts";
import { postTransfers } from "../../src/ledger/post-transfers.ts";
import { storedTransfers } from "../../src/ledger/stored-transfers.ts";
import { storedKeysOf, selectRecentlyApplied } from "../../src/records/store/keys.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { transferOf } from "../support/ledger-fixtures.ts";

/**
 * docs/decisions/0052: a lookup by a list of keys reads the rows of those keys, however many rows
 * the tenant has and whether or not the table has statistics. The tables here are filled with
 * thousands of rows of one tenant and never analyzed (autovacuum off for them), the state in
 * which a planner believed the tenant had a handful of rows and scanned all of them per lookup.
 * Rows read are counted by the transaction's own statistics (pg_stat_xact_user_tables).
 */
const TENANT = "t1";
const ROWS = 5_000;
// Enough keys that one descent per key looks dearer than the few rows a planner without
// statistics expects under the tenant's prefix: the case where it chose to scan the prefix.
const ASKED = 200;
const TRANSFERS = 1_000;
const some = (prefix: string, start: number) => Array.from({ length: ASKED }, (_, i) => `${prefix}${start + i * 7}`);

async function rowsRead(db: Queryable, table: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::text AS n FROM pg_stat_xact_user_tables WHERE relname = $1", [table]);
  return Number(rows[0]?.n ?? "0");
}

class RolledBack extends Error {}

/** What `work` returns, run in one transaction (one connection) that is rolled back afterwards. */
async function rowsOfOneConnection<T>(db: TestDatabase, work: (tx: Tx) => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  await withTransaction(db.pool, async (tx) => {
    result = { value: await work(tx) };
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });
  if (!result) throw new Error("the work did not run");
  return result.value;
}

/** The rows of `table` that `lookup` reads, in a transaction rolled back afterwards. */
function rowsReadBy(db: TestDatabase, table: string, lookup: (tx: Tx) => Promise<unknown>): Promise<number> {
  return rowsOfOneConnection(db, async (tx) => {
    const before = await rowsRead(tx, table);
    await lookup(tx);
    return (await rowsRead(tx, table)) - before;
  });
}

describe("lookups by a list of keys on tables without statistics", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const tables = ["record_key", "account", "idempotency_record", "transfer", "ledger_entry"];
    for (const table of tables) {
      await db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
    await db.pool.query(
      `INSERT INTO account (tenant_id, account_id, kind, currency)
       SELECT $1, 'cust-' || g, 'customer', 'USD' FROM generate_series(1, $2::int) g
       UNION ALL SELECT $1, 'settlement', 'settlement', 'USD'`, [TENANT, ROWS]);
    for (let start = 1; start <= TRANSFERS; start += 250) {
      const batch = Array.from({ length: 250 }, (_, i) => transferOf(TENANT, `seed-${start + i}`, "settlement", `cust-${start + i}`, 100n));
      await withTransaction(db.pool,
        (tx) => postTransfers(tx, batch.map((transfer) => ({ transfer }))));
    }
    await db.pool.query(
      `INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
         record_index, position, amount_minor, currency, value_date)
       SELECT $1, 'key-' || g, 'fp-' || g, 'ach', 'credit', 'applied', 'fil_seed', g, 'line ' || g, 100, 'USD', '2026-12-02' FROM generate_series(1, $2::int) g`,
      [TENANT, ROWS]);
    await db.pool.query(
      `INSERT INTO idempotency_record (tenant_id, endpoint, idem_key, request_digest, request_canonical, state, lease_until, expires_at, response_status, response_body)
       SELECT $1, 'POST /v1/payments', 'idem-' || g, 'd', '{}', CASE WHEN g <= 2 THEN 'in_progress' ELSE 'completed' END, now() + interval '1 minute',
              now() + interval '1 day', CASE WHEN g <= 2 THEN NULL ELSE 201 END, CASE WHEN g <= 2 THEN NULL ELSE '{}' END
         FROM generate_series(1, $2::int) g`, [TENANT, ROWS]);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("the stored keys of a chunk are found by probing each key", async () => {
    const read = await rowsReadBy(
      db, "record_key", (tx) => storedKeysOf(tx, TENANT, [...some("key-", 3), "key-none"]));
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("the suspect probe reads only records with the chunk's fingerprints", async () => {
    const fingerprints = [...some("fp-", 9), "fp-none"];
    const read = await rowsReadBy(
      db, "record_key", (tx) => selectRecentlyApplied(tx, TENANT, fingerprints, "fil_other", 24));
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("accounts named by id are found by probing each id", async () => {
    const read = await rowsReadBy(db, "account", (tx) => findAccounts(tx, TENANT, [...some("cust-", 1), "nobody"]));
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("balances are read for the accounts asked for, not for the tenant's other accounts", async () => {
    const read = await rowsReadBy(db, "account", (tx) => balancesOf(tx, TENANT, some("cust-", 2)));
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("a batch of postings reads and locks its own accounts only", async () => {
    const customers = some("cust-", 4);
    await withTransaction(db.pool, (tx) => postTransfers(tx, customers.map((c) => ({
      transfer: transferOf(TENANT, `fund-${c}`, "settlement", c, 500n),
    }))));
    const read = await rowsReadBy(db, "account", async (tx) => {
      const posted = await postTransfers(tx, customers.map((c) => ({
        transfer: transferOf(TENANT, `spend-${c}`, c, "settlement", 200n),
      })));
      expect(posted.every((p) => p.outcome.ok)).toBe(true);
    });
    // A few reads per account of the batch (the lock, the balance, the ledger's checks at
    // statement end), never the tenant's 5,000 per statement.
    expect(read).toBeLessThanOrEqual(10 * ASKED);
  });

  it("the posting path's prepared statements are planned once per connection, not on every call", async () => {
    const customers = some("cust-", 5).slice(0, 8);
    const plans = await rowsOfOneConnection(db, async (tx) => {
      for (const c of customers) {
        const transfer = transferOf(TENANT, `plan-${c}`, "settlement", c, 100n);
        await postTransfers(tx, [{ transfer }]);
      }
      const { rows } = await tx.query<{ name: string; generic_plans: string; custom_plans: string }>(
        "SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name LIKE 'clearline.ledger.%' ORDER BY name");
      return rows;
    });
    expect(plans.map((p) => p.name)).toEqual(["clearline.ledger.accounts-and-locks", "clearline.ledger.balances-of-locked", "clearline.ledger.insert-transfers"]);
    for (const p of plans) expect({ name: p.name, custom: Number(p.custom_plans) }).toEqual({ name: p.name, custom: 0 });
  });

  it("stored transfers are read by probing each key, not the tenant's other transfers", async () => {
    const keys = Array.from({ length: ASKED }, (_, i) => `seed-${1 + i * 3}`);
    const read = await rowsReadBy(db, "transfer", async (tx) => expect((await storedTransfers(tx, TENANT, keys)).size).toBe(ASKED));
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("the replay fast path of a batch of requests reads the idempotency records of its own keys only", async () => {
    const keys = [...some("idem-", 3), "idem-none"];
    const read = await rowsReadBy(db, "idempotency_record", async (tx) => {
      const records = await findRecordsAuditingRepeats(tx, TENANT, "POST /v1/payments", keys.map((key) => ({ key, digest: "d" })));
      expect(records.filter((r) => r !== undefined)).toHaveLength(ASKED);
    });
    expect(read).toBeLessThanOrEqual(ASKED);
  });

  it("a batch's completions update its own idempotency records by probing each key", async () => {
    const read = await rowsReadBy(db, "idempotency_record", async (tx) => {
      const params = new StatementParams();
      const part = completeBatchPart(params, TENANT, "POST /v1/payments", [
        { key: "idem-1", attempt: 1, response: { status: 201, body: "{}", effectRef: "pay_1" } },
        { key: "idem-2", attempt: 1, response: { status: 201, body: "{}", effectRef: "pay_2" } },
      ]);
      const { rows } = await tx.query<{ n: number }>(`WITH done AS (${part}) SELECT count(*)::int AS n FROM done`, params.values);
      expect(rows[0]?.n).toBe(2);
    });
    expect(read).toBeLessThanOrEqual(4);
  });
});
