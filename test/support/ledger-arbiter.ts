import { afterEach, expect } from "vitest";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { openLedgerDatabases } from "./database.ts";

/**
 * `clearline ledger verify` is the arbiter of every test that moves money: after each test, every
 * migrated test database still open in the file must verify clean (each transfer balances, every
 * balance as read equals the sums of its entries, no customer below zero). A test that damages
 * the ledger on purpose says so with markTampered().
 */
afterEach(async () => {
  for (const database of openLedgerDatabases) {
    const report = await verifyLedger(database.pool);
    expect(report.problems, `ledger verify of ${database.name} after this test`).toEqual([]);
  }
});
