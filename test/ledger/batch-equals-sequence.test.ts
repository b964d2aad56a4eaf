import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import type { Pool } from "../../src/db/pool.ts";
import { postTransfer, postTransfers } from "../../src/ledger/post-transfers.ts";
import type { Transfer } from "../../src/ledger/transfer.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

// A batch must give every transfer the outcome it gets when the same transfers are posted one
// after the other as batches of one, and leave the same ledger behind.
let tenantCounter = 0;

async function givenLedger(pool: Pool): Promise<string> {
  const tenantId = `batch-${++tenantCounter}`;
  await givenAccounts(pool, tenantId, [["settlement", "settlement"], ["suspense", "suspense"], ["alice", "customer"], ["bob", "customer"], ["euro", "customer", "EUR"]]);
  await post(pool, transferOf(tenantId, "seed:alice", "settlement", "alice", 100n));
  return tenantId;
}

function outcomeOf(result: Awaited<ReturnType<typeof postTransfer>>): string {
  return result.ok ? result.value : result.error.code;
}

async function sequential(pool: Pool, transfers: Transfer[]): Promise<string[]> {
  return withTransaction(pool, async (tx) => {
    const outcomes: string[] = [];
    for (const transfer of transfers) outcomes.push(outcomeOf(await postTransfer(tx, transfer)));
    return outcomes;
  });
}

async function batched(pool: Pool, transfers: Transfer[]): Promise<string[]> {
  return withTransaction(pool, async (tx) => {
    const posted = await postTransfers(tx, transfers.map((transfer) => ({ transfer })));
    return posted.map((p) => outcomeOf(p.outcome));
  });
}

async function ledgerOf(pool: Pool, tenantId: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `SELECT t.transfer_key || ' ' || t.kind || ' ' || t.value_date || ' ' || e.entry_key || ' ' || e.account_id || ' ' || e.direction || ' ' || e.amount_minor || ' ' || e.currency AS line
       FROM transfer t JOIN ledger_entry e ON e.tenant_id = t.tenant_id AND e.transfer_key = t.transfer_key
      WHERE t.tenant_id = $1 ORDER BY e.entry_key`, [tenantId]);
  return rows.map((r) => r.line);
}

/** Posts `build(tenant)` both ways on two identical ledgers; returns both outcome lists and ledgers. */
async function both(pool: Pool, build: (tenantId: string) => Transfer[], before: (tenantId: string) => Promise<void> = async () => undefined) {
  const one = await givenLedger(pool);
  const two = await givenLedger(pool);
  await before(one);
  await before(two);
  const expected = await sequential(pool, build(one));
  const actual = await batched(pool, build(two));
  return { expected, actual, expectedLedger: await ledgerOf(pool, one), actualLedger: await ledgerOf(pool, two) };
}

describe("postTransfers: the outcomes of postTransfer called in order, in a few statements", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("applies new transfers and leaves the same entries as one-by-one posting", async () => {
    const r = await both(db.pool, (t) => [transferOf(t, "a", "settlement", "suspense", 10n), transferOf(t, "b", "settlement", "bob", 20n)]);
    expect(r.actual).toEqual(["applied", "applied"]);
    expect(r.actual).toEqual(r.expected);
    expect(r.actualLedger.map((l) => l.replace(/^batch-\d+ /, ""))).toEqual(r.expectedLedger.map((l) => l.replace(/^batch-\d+ /, "")));
  });

  it("answers a key posted before with exists, or names the field that differs", async () => {
    const r = await both(db.pool, (t) => [
      transferOf(t, "k", "settlement", "suspense", 10n),
      transferOf(t, "k", "settlement", "suspense", 11n),
      transferOf(t, "k", "settlement", "suspense", 10n, { kind: "other" }),
      transferOf(t, "k", "settlement", "suspense", 10n, { valueDate: "2026-12-03" }),
      transferOf(t, "k", "settlement", "bob", 10n),
      transferOf(t, "k", "suspense", "settlement", 10n),
    ], async (t) => { await post(db.pool, transferOf(t, "k", "settlement", "suspense", 10n)); });
    expect(r.actual).toEqual(["exists", "exists_with_different_amount", "exists_with_different_kind", "exists_with_different_value_date", "exists_with_different_account", "exists_with_different_account"]);
    expect(r.actual).toEqual(r.expected);
  });

  it("treats a key repeated inside the batch as a replay of its first occurrence", async () => {
    const r = await both(db.pool, (t) => [transferOf(t, "twice", "settlement", "suspense", 5n), transferOf(t, "twice", "settlement", "suspense", 5n), transferOf(t, "twice", "settlement", "suspense", 6n)]);
    expect(r.actual).toEqual(["applied", "exists", "exists_with_different_amount"]);
    expect(r.actual).toEqual(r.expected);
  });

  it("refuses a debit that would take a customer below zero, counting the batch's earlier transfers", async () => {
    // alice holds 1.00: 0.60 out, 0.60 out (short), 0.50 in, 0.60 out (now covered), 0.91 out (short by 0.01).
    const r = await both(db.pool, (t) => [
      transferOf(t, "d1", "alice", "settlement", 60n), transferOf(t, "d2", "alice", "settlement", 60n), transferOf(t, "c1", "settlement", "alice", 50n),
      transferOf(t, "d3", "alice", "settlement", 60n), transferOf(t, "d4", "alice", "settlement", 31n),
    ]);
    expect(r.actual).toEqual(["applied", "LEDGER_INSUFFICIENT_FUNDS", "applied", "applied", "LEDGER_INSUFFICIENT_FUNDS"]);
    expect(r.actual).toEqual(r.expected);
  });

  it("refuses unknown accounts, currency mismatches and empty transfers as postTransfer does", async () => {
    const r = await both(db.pool, (t) => [
      transferOf(t, "u", "settlement", "nobody", 1n),
      { ...transferOf(t, "c", "settlement", "euro", 1n) },
      { tenantId: t, transferKey: "e", kind: "payment", valueDate: "2026-12-02", legs: [] },
    ]);
    expect(r.actual).toEqual(["LEDGER_ACCOUNT_UNKNOWN", "LEDGER_ACCOUNT_CURRENCY_MISMATCH", "LEDGER_TRANSFER_EMPTY"]);
    expect(r.actual).toEqual(r.expected);
  });

  it("agrees with one-by-one posting on random sequences of transfers, replays and overdrafts", async () => {
    const accounts = ["settlement", "suspense", "alice", "bob"] as const;
    const transfer = fc.record({
      key: fc.constantFrom("k1", "k2", "k3", "k4", "k5"),
      from: fc.constantFrom(...accounts),
      to: fc.constantFrom(...accounts),
      amount: fc.bigInt({ min: 1n, max: 80n }),
    }).filter((t) => t.from !== t.to);
    await fc.assert(fc.asyncProperty(fc.array(transfer, { minLength: 1, maxLength: 12 }), async (list) => {
      const build = (tenantId: string) => list.map((t) => transferOf(tenantId, t.key, t.from, t.to, t.amount));
      const r = await both(db.pool, build);
      expect(r.actual).toEqual(r.expected);
      expect(r.actualLedger.map((l) => l.replace(/^batch-\d+ /, ""))).toEqual(r.expectedLedger.map((l) => l.replace(/^batch-\d+ /, "")));
    }), { numRuns: 25 });
  });
});
