import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";
import { camt053 } from "./statements.ts";

// The derivation as migration 0018 spelled it out in its triggers, before migration 0021 moved it
// into one function: what recon_item_ref must hold for the items of one account.
const DERIVED_AS_0018 = `
  SELECT n.tenant_id, n.account_id, n.item_key, r.ref, n.booking_date,
         CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END AS signed_minor, n.currency, n.status,
         recon_item_hash(n.item_key, CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END, n.status, n.booking_date) AS item_hash
    FROM recon_external_item n CROSS JOIN LATERAL recon_match_refs(n.refs, n.status, n.duplicate_of) AS r(ref)
   WHERE n.tenant_id = $1
   ORDER BY 3, 4`;
const STORED = `
  SELECT tenant_id, account_id, item_key, ref, booking_date, signed_minor, currency, status, item_hash
    FROM recon_item_ref WHERE tenant_id = $1 ORDER BY 3, 4`;

async function importStatement(db: TestDatabase, tenantId: string, statement: Buffer, name: string): Promise<void> {
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name, content: statement });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
}

async function rowsOf(db: TestDatabase, sql: string, tenantId: string): Promise<unknown[]> {
  return (await db.pool.query(sql, [tenantId])).rows;
}

describe("an item's reference rows (recon_item_ref), derived by the triggers", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("are the rows 0018's derivation gives, for credits, debits, batches, pending, repeated and reference-less items, and again once a pending entry is booked", async () => {
    const tenantId = "item-refs";
    await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
    await importStatement(db, tenantId, camt053({ id: "S1", entries: [
      { amount: "20.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-1" },
      { amount: "20.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-1" },
      { amount: "7.50", direction: "DBIT", date: "2026-12-01", svcrRef: "B2", endToEndId: "PAY-2" },
      { amount: "8.00", date: "2026-12-01", svcrRef: "B3", status: "PDNG", endToEndId: "INV-3" },
      { amount: "3.00", date: "2026-12-01", svcrRef: "B4" },
      { amount: "30.00", date: "2026-12-01", svcrRef: "B5", parts: [{ amount: "10.00", endToEndId: "P-1" }, { amount: "20.00", endToEndId: "P-2" }] },
    ] }), "first.xml");
    const first = await rowsOf(db, STORED, tenantId);
    expect(first.length).toBeGreaterThanOrEqual(6);
    expect(first).toEqual(await rowsOf(db, DERIVED_AS_0018, tenantId));

    await importStatement(db, tenantId, camt053({ id: "S2", date: "2026-12-02", entries: [
      { amount: "8.00", date: "2026-12-02", svcrRef: "B3", endToEndId: "INV-3" },
    ] }), "second.xml");
    const { rows } = await db.pool.query<{ status: string }>("SELECT DISTINCT status FROM recon_item_ref WHERE tenant_id = $1", [tenantId]);
    expect(rows.map((r) => r.status)).not.toContain("pending");
    expect(await rowsOf(db, STORED, tenantId)).toEqual(await rowsOf(db, DERIVED_AS_0018, tenantId));
  });
});
