import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { matchingRules } from "../../src/recon/matching-rules.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { leadingSetRules, matchInDatabase, type ReferenceLookup, type SetMatchSummary } from "../../src/recon/set-matching.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053 } from "./statements.ts";

// A run finds the payment and the record behind each of our transfers by an index probe per
// transfer or by hashing the table, whichever reads less (decision 0050). Which one it takes must
// never change what it finds.

const tenantId = "lookups";

async function givenBooksWithPaymentAndRecordReferences(db: TestDatabase): Promise<void> {
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [key, amountMinor] of [["pay:ORDER-1:debit", 5_000n], ["ach:rec-1:post", 7_000n], ["WIRE-1", 3_000n]] as const) {
    const outcome = await post(db.pool, transferOf(tenantId, key, "settlement", "alice", amountMinor, { valueDate: "2026-12-01" }));
    if (!outcome.ok) throw new Error(outcome.error.message);
  }
  // The bank names the first by the payment's client reference, the second by the record's trace.
  await db.pool.query(
    `INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency, debtor_account, creditor_account, transfer_key)
     VALUES ($1, 'pay_1', 'INV-1', 'succeeded', 5000, 'USD', 'settlement', 'alice', 'pay:ORDER-1:debit')`, [tenantId]);
  await db.pool.query(
    `INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
       record_index, position, amount_minor, currency, value_date, transfer_key, link_id1)
     VALUES ($1, 'ach:rec-1', 'f', 'ach', 'credit', 'applied', 'fil_1', 1, 'line 3', 7000, 'USD', '2026-12-01', 'ach:rec-1:post', 'ach-trace:231380100000009')`, [tenantId]);
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "lookups.xml", content: camt053({ id: "L1", entries: [
    { amount: "50.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-1" },
    { amount: "70.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "231380100000009" },
    { amount: "30.00", date: "2026-12-01", svcrRef: "B3", endToEndId: "WIRE-1" },
    { amount: "1.00", date: "2026-12-01", svcrRef: "B4", endToEndId: "NOBODY" },
  ] }) });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
}

function dryMatch(db: TestDatabase, referenceLookup?: ReferenceLookup): Promise<SetMatchSummary> {
  return withTransaction(db.pool, (tx) => matchInDatabase(tx, {
    tenantId, accountId: "settlement", currency: "USD", loadFrom: "2026-11-01", loadTo: "2026-12-31", from: "2026-12-01", to: "2026-12-01",
    rules: leadingSetRules(matchingRules), keepPairs: false, ...(referenceLookup ? { referenceLookup } : {}),
  }));
}

describe("a run finds our references the same by index probe and by hashing the tables", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenBooksWithPaymentAndRecordReferences(db);
  });
  afterAll(async () => { await db.drop(); });

  it("pairs the entries named by a payment's client reference and by a record's trace, whichever way each table is read", async () => {
    const chosen = await dryMatch(db);
    expect(chosen).toMatchObject({ items: 4, transfers: 3, matched: 3, itemsLeft: 1, transfersLeft: 0 });
    for (const paymentByProbe of [true, false]) {
      for (const recordByProbe of [true, false]) {
        expect(await dryMatch(db, { paymentByProbe, recordByProbe })).toEqual(chosen);
      }
    }
  });
});
