import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { InvariantError } from "../../src/assert.ts";
import { limits } from "../../src/config/limits.ts";

describe("every transfer balances", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"], ["euro", "customer", "EUR"]]);
  });
  afterAll(async () => {
    await db.drop();
  });

  async function count(sql: string): Promise<number> {
    const { rows } = await db.pool.query(sql);
    return Number(rows[0].n);
  }

  it("refuses an unbalanced transfer written by hand, bypassing the code", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:1', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'hand:1#0', 'hand:1', 'settlement', 'D', 100, 'USD', '2026-12-02'),
        ('t1', 'hand:1#1', 'hand:1', 'alice', 'C', 99, 'USD', '2026-12-02')`);
    });
    await expect(attempt).rejects.toThrow(/does not balance/);
    expect(await count("SELECT count(*) AS n FROM transfer WHERE transfer_key = 'hand:1'")).toBe(0);
  });

  it("refuses a transfer with a single leg", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:2', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
        VALUES ('t1', 'hand:2#0', 'hand:2', 'settlement', 'D', 100, 'USD', '2026-12-02')`);
    });
    await expect(attempt).rejects.toThrow(/at least 2/);
  });

  it("refuses an entry added later to a transfer committed earlier", async () => {
    await post(db.pool, transferOf("t1", "later:1", "settlement", "alice", 10n));
    const attempt = db.pool.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
      VALUES ('t1', 'later:1#9', 'later:1', 'alice', 'C', 5, 'USD', '2026-12-02')`);
    await expect(attempt).rejects.toThrow(/not created by this transaction/);
  });

  it("refuses an entry whose currency is not its account's", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:3', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'hand:3#0', 'hand:3', 'settlement', 'D', 100, 'EUR', '2026-12-02'),
        ('t1', 'hand:3#1', 'hand:3', 'euro', 'C', 100, 'EUR', '2026-12-02')`);
    });
    await expect(attempt).rejects.toThrow(/account settlement is not/);
  });

  it("refuses at commit a transfer that never got entries", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:4', 'payment', '2026-12-02')");
    });
    await expect(attempt).rejects.toThrow(/0 legs; at least 2/);
    expect(await count("SELECT count(*) AS n FROM transfer WHERE transfer_key = 'hand:4'")).toBe(0);
  });

  it("refuses entries that balance only across two statements", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:5', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'hand:5#0', 'hand:5', 'settlement', 'D', 100, 'USD', '2026-12-02'), ('t1', 'hand:5#1', 'hand:5', 'alice', 'C', 60, 'USD', '2026-12-02')`);
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'hand:5#2', 'hand:5', 'alice', 'C', 40, 'USD', '2026-12-02')`);
    });
    await expect(attempt).rejects.toThrow(/does not balance/);
  });

  it("accepts a transfer whose legs arrive in two statements that each balance", async () => {
    await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:6', 'payment', '2026-12-02')");
      for (const [first, second] of [["hand:6#0", "hand:6#1"], ["hand:6#2", "hand:6#3"]]) {
        await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
          ('t1', $1, 'hand:6', 'settlement', 'D', 10, 'USD', '2026-12-02'), ('t1', $2, 'hand:6', 'alice', 'C', 10, 'USD', '2026-12-02')`, [first, second]);
      }
    });
    expect(await count("SELECT count(*) AS n FROM ledger_entry WHERE transfer_key = 'hand:6'")).toBe(4);
  });

  it("refuses an entry in an account that does not exist", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'hand:7', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'hand:7#0', 'hand:7', 'settlement', 'D', 100, 'USD', '2026-12-02'), ('t1', 'hand:7#1', 'hand:7', 'nobody', 'C', 100, 'USD', '2026-12-02')`);
    });
    await expect(attempt).rejects.toThrow(/account nobody is not \(or does not exist\)/);
  });

  it("refuses an entry whose transfer does not exist", async () => {
    const attempt = db.pool.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
      ('t1', 'ghost#0', 'ghost', 'settlement', 'D', 100, 'USD', '2026-12-02'), ('t1', 'ghost#1', 'ghost', 'alice', 'C', 100, 'USD', '2026-12-02')`);
    await expect(attempt).rejects.toThrow(/not created by this transaction/);
  });

  it("refuses removing, re-keying or changing the currency of an account (entries reference it)", async () => {
    await expect(db.pool.query("DELETE FROM account WHERE tenant_id = 't1' AND account_id = 'alice'")).rejects.toThrow(/accounts are permanent/);
    await expect(db.pool.query("UPDATE account SET currency = 'EUR' WHERE tenant_id = 't1' AND account_id = 'alice'")).rejects.toThrow(/accounts are permanent/);
    await expect(db.pool.query("UPDATE account SET account_id = 'alicia' WHERE tenant_id = 't1' AND account_id = 'alice'")).rejects.toThrow(/accounts are permanent/);
    await expect(db.pool.query("TRUNCATE account CASCADE")).rejects.toThrow(/accounts are permanent/);
  });

  it("stops the process (invariant) when code builds an unbalanced transfer", async () => {
    const unbalanced = transferOf("t1", "code:1", "settlement", "alice", 10n);
    unbalanced.legs[1]!.amountMinor = 9n;
    await expect(post(db.pool, unbalanced)).rejects.toBeInstanceOf(InvariantError);
  });

  it(`stops the process (invariant) for a balanced transfer with more than ${limits.ledger.transferLegsMax} legs`, async () => {
    const leg = { accountId: "settlement", direction: "D" as const, amountMinor: 1n, currency: "USD" };
    const legs = Array.from({ length: limits.ledger.transferLegsMax + 1 }, (_, i) => (i % 2 === 0 ? leg : { ...leg, accountId: "alice", direction: "C" as const }));
    legs.push({ ...leg, accountId: "alice", direction: "C" });
    await expect(post(db.pool, { ...transferOf("t1", "code:3", "settlement", "alice", 1n), legs })).rejects.toBeInstanceOf(InvariantError);
  });

  it("returns a typed error, not an exception, for a transfer with no legs", async () => {
    const empty = { ...transferOf("t1", "code:2", "settlement", "alice", 10n), legs: [] };
    const result = await post(db.pool, empty);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe("LEDGER_TRANSFER_EMPTY");
  });
});
