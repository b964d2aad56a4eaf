import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { LedgerUniqueIndexHit } from "../../src/ledger/post-transfers.ts";
import { registry } from "../../src/observability/metrics.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

async function uniqueHits(): Promise<number> {
  const text = await registry.getSingleMetricAsString("clearline_ledger_entry_unique_index_hits_total");
  return Number(/clearline_ledger_entry_unique_index_hits_total (\d+)/.exec(text)?.[1] ?? "NaN");
}

describe("the ledger's last-line unique index", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"]]);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("refuses entries whose keys another transfer already holds, rolls the transfer back and counts the hit", async () => {
    // Entries written by hand under the keys that transfer "victim" will derive (a bug upstream).
    await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'squatter', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'victim#0', 'squatter', 'settlement', 'D', 5, 'USD', '2026-12-02'), ('t1', 'victim#1', 'squatter', 'alice', 'C', 5, 'USD', '2026-12-02')`);
    });
    const before = await uniqueHits();
    await expect(post(db.pool, transferOf("t1", "victim", "settlement", "alice", 7n))).rejects.toBeInstanceOf(LedgerUniqueIndexHit);
    expect(await uniqueHits()).toBe(before + 2);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE transfer_key = 'victim'");
    expect(rows[0].n).toBe(0);
  });
});
