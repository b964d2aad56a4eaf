import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf } from "../../src/ledger/balance.ts";
import {
  correctDifference, explainDifference, listOpenDifferences,
} from "../../src/recon/differences.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053, type EntrySpec } from "./statements.ts";

// A statement entry in another currency than its account (decision 0104), in the shape of a public
// camt.053 sample: a USD account with one entry booked as EUR 29.06, the instructed USD 25.00 and
// the exchange in its AmtDtls.

let tenantCounter = 0;

async function givenBooks(db: TestDatabase, wires: Array<[reference: string, amountMinor: bigint]>): Promise<string> {
  const tenantId = `recon-fx-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [reference, amountMinor] of wires) {
    const outcome = await post(db.pool, transferOf(tenantId, reference, "settlement", "alice", amountMinor, { valueDate: "2026-12-01" }));
    if (!outcome.ok) throw new Error(outcome.error.message);
  }
  return tenantId;
}

const euroEntry = (overrides: Partial<EntrySpec> = {}): EntrySpec => ({
  amount: "25.00", date: "2026-12-01", svcrRef: "FX1", endToEndId: "INV-FX",
  foreign: { amount: "29.06", currency: "EUR", rate: "1.1624" }, ...overrides,
});

function statementWithOneEuroEntry(id: string, foreign: Partial<EntrySpec> = {}): Buffer {
  return camt053({ id, entries: [
    { amount: "125.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-1" },
    euroEntry(foreign),
    { amount: "40.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "INV-2" },
  ] });
}

async function importAndRun(db: TestDatabase, tenantId: string, statement: Buffer) {
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "fx.xml", content: statement });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
  const run = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
  if (!run.ok) throw new Error(run.error.message);
  return { imported: imported.value, run: run.value };
}

describe("a statement entry in another currency than its account", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("is imported with the rest of the statement and named in a warning with its account-currency amount and rate", async () => {
    const tenantId = await givenBooks(db, []);
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "fx.xml", content: statementWithOneEuroEntry("FX-A") });
    expect(imported.ok).toBe(true);
    if (!imported.ok) return;
    expect(imported.value.items).toBe(3);
    // The closing balance counts the entry at its USD amount: no balance warning.
    expect(imported.value.warnings.map((w) => w.code)).toEqual(["RECON_ITEM_FOREIGN_CURRENCY"]);
    const warning = imported.value.warnings[0];
    expect(warning?.message).toContain("29.06 EUR on a USD account");
    expect(warning?.message).toContain("25.00 USD at rate 1.1624");
    expect(warning?.position.xmlPath).toMatch(/Ntry\[2\]$/);
    const { rows } = await db.pool.query(
      "SELECT amount_minor::text, currency, foreign_detail FROM recon_external_item WHERE tenant_id = $1 AND item_key = 'svcr:FX1'", [tenantId]);
    expect(rows[0]).toMatchObject({
      amount_minor: "2906", currency: "EUR",
      foreign_detail: { accountCurrency: "USD", accountAmountMinor: "2500", exchange: { sourceCurrency: "USD", targetCurrency: "EUR", rate: "1.1624" } },
    });
  });

  it("is set aside by a run as a foreign_currency difference of its account-currency amount, while the other entries match", async () => {
    const tenantId = await givenBooks(db, [["INV-1", 12_500n], ["INV-2", 4_000n], ["INV-FX", 2_500n]]);
    const { run } = await importAndRun(db, tenantId, statementWithOneEuroEntry("FX-B"));
    // Never matched by itself, even to the transfer its reference names: that one stays ours_only beside it.
    expect(run).toMatchObject({ matched: 2, differences: { foreign_currency: 1, ours_only: 1, theirs_only: 0, amount_differs: 0 } });
    const open = await listOpenDifferences(db.pool, tenantId, "settlement", 10);
    expect(open.find((d) => d.reason === "foreign_currency")).toMatchObject({ itemKeys: ["svcr:FX1"], deltaMinor: 2_500n, currency: "USD" });
  });

  it("when corrected, posts the statement's account-currency amount in the account's currency", async () => {
    const tenantId = await givenBooks(db, [["INV-1", 12_500n], ["INV-2", 4_000n]]);
    await importAndRun(db, tenantId, statementWithOneEuroEntry("FX-C"));
    const difference = (await listOpenDifferences(db.pool, tenantId, "settlement", 10)).find((d) => d.reason === "foreign_currency");
    expect(difference).toBeDefined();
    const before = await balanceOf(db.pool, tenantId, "settlement");
    const corrected = await correctDifference(db.pool, { tenantId, differenceId: difference?.differenceId ?? "", reason: "bank converted at 1.1624", operator: "ops-1" }, "2026-12-02");
    expect(corrected).toMatchObject({ ok: true, value: { state: "corrected" } });
    const after = await balanceOf(db.pool, tenantId, "settlement");
    expect((after?.balanceMinor ?? 0n) - (before?.balanceMinor ?? 0n)).toBe(2_500n);
  });

  it("without an amount in the account's currency cannot be corrected, only explained, and moves no money", async () => {
    const tenantId = await givenBooks(db, [["INV-1", 12_500n], ["INV-2", 4_000n]]);
    const statement = statementWithOneEuroEntry("FX-D", { foreign: { amount: "29.06", currency: "EUR", instructed: false } });
    const { imported } = await importAndRun(db, tenantId, statement);
    expect(imported.warnings.find((w) => w.code === "RECON_ITEM_FOREIGN_CURRENCY")?.message).toContain("the statement gives no amount in USD");
    const difference = (await listOpenDifferences(db.pool, tenantId, "settlement", 10)).find((d) => d.reason === "foreign_currency");
    expect(difference?.deltaMinor).toBe(0n);
    const ruling = { tenantId, differenceId: difference?.differenceId ?? "", reason: "FX booked by treasury", operator: "ops-1" };
    const before = await balanceOf(db.pool, tenantId, "settlement");
    expect(await correctDifference(db.pool, ruling, "2026-12-02")).toMatchObject({ ok: false, error: { code: "RECON_DIFFERENCE_NOT_CORRECTABLE" } });
    expect(await explainDifference(db.pool, ruling)).toMatchObject({ ok: true, value: { state: "explained" } });
    expect((await balanceOf(db.pool, tenantId, "settlement"))?.balanceMinor).toBe(before?.balanceMinor);
  });
});
