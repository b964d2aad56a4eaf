import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053, type EntrySpec } from "./statements.ts";

// A dry run asks the set-based match without writing first, and writes its leftovers only when
// there are any (docs/decisions/0040): either way it counts what the stored run then stores.

let tenantCounter = 0;

async function givenPeriod(db: TestDatabase, transfers: Array<[string, bigint]>, entries: EntrySpec[]): Promise<string> {
  const tenantId = `dry-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [key, amountMinor] of transfers) {
    const outcome = await post(db.pool, transferOf(tenantId, key, "settlement", "alice", amountMinor, { valueDate: "2026-12-01" }));
    if (!outcome.ok) throw new Error(outcome.error.message);
  }
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "s.xml", content: camt053({ id: `DRY${tenantCounter}`, entries }) });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
  return tenantId;
}

async function dryThenStored(db: TestDatabase, tenantId: string) {
  const period = { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" };
  const dry = await runReconciliation(db.pool, { ...period, dryRun: true });
  const runsAfterDry = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM recon_run WHERE tenant_id = $1", [tenantId]);
  const stored = await runReconciliation(db.pool, period);
  if (!dry.ok || !stored.ok) throw new Error(JSON.stringify([dry, stored]));
  return { dry: dry.value, stored: stored.value, runsAfterDry: runsAfterDry.rows[0]?.n };
}

describe("a dry run counts what the stored run stores", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("when everything pairs by reference (nothing left for the in-memory matcher)", async () => {
    const tenantId = await givenPeriod(db, [["W1", 1_000n], ["W2", 2_000n]], [
      { amount: "10.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "W1" },
      { amount: "20.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "W2" },
    ]);
    const { dry, stored, runsAfterDry } = await dryThenStored(db, tenantId);
    expect(runsAfterDry).toBe(0);
    expect([dry.runId, dry.matched, dry.differences]).toEqual([stored.runId, 2, stored.differences]);
  });

  it("when some are left for the in-memory matcher (an amount that differs, one on each side alone)", async () => {
    const tenantId = await givenPeriod(db, [["W1", 1_000n], ["W2", 2_000n], ["W3", 3_000n]], [
      { amount: "10.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "W1" },
      { amount: "20.01", date: "2026-12-01", svcrRef: "B2", endToEndId: "W2" },
      { amount: "40.00", date: "2026-12-01", svcrRef: "B4", endToEndId: "NOBODY" },
    ]);
    const { dry, stored, runsAfterDry } = await dryThenStored(db, tenantId);
    expect(runsAfterDry).toBe(0);
    expect([dry.runId, dry.matched, dry.differences]).toEqual([stored.runId, stored.matched, stored.differences]);
    expect([stored.matched, stored.differences.amount_differs, stored.differences.theirs_only, stored.differences.ours_only]).toEqual([1, 1, 1, 1]);
  });
});
