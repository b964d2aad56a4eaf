import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { accountStatement } from "../../src/ledger/statement.ts";
import { correctDifference, explainDifference, listOpenDifferences, reconSuspenseAccountOf } from "../../src/recon/differences.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation, showRun, type RunSummary } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { compensationFor } from "../../src/normalize/posting-rules.ts";
import { camt053 } from "./statements.ts";

let tenantCounter = 0;

/** A tenant with a settlement account at the bank and a customer; `wires` are money received, booked by us. */
async function givenBooks(db: TestDatabase, wires: Array<[reference: string, amountMinor: bigint, valueDate?: string]>): Promise<string> {
  const tenantId = `recon-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [reference, amountMinor, valueDate] of wires) {
    const outcome = await post(db.pool, transferOf(tenantId, reference, "settlement", "alice", amountMinor, { valueDate: valueDate ?? "2026-12-01" }));
    if (!outcome.ok) throw new Error(outcome.error.message);
  }
  return tenantId;
}

async function importAndRun(db: TestDatabase, tenantId: string, statement: Buffer, period = { from: "2026-12-01", to: "2026-12-01" }): Promise<RunSummary> {
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "statement.xml", content: statement });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
  const run = await runReconciliation(db.pool, { tenantId, accountId: "settlement", ...period });
  if (!run.ok) throw new Error(run.error.message);
  return run.value;
}

const none = { theirs_only: 0, ours_only: 0, amount_differs: 0, date_outside_window: 0, duplicate_on_their_side: 0, pending: 0, foreign_currency: 0 };

describe("two-sided reconciliation of a settlement account against a bank statement", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("matches a day where both sides agree, each match naming its rule", async () => {
    const tenantId = await givenBooks(db, [["INV-1001", 12_500n], ["INV-1002", 4_000n], ["INV-1003", 99n]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S1", entries: [
      { amount: "125.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-1001" },
      { amount: "40.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "INV-1002" },
      { amount: "0.99", date: "2026-12-01", svcrRef: "B3", endToEndId: "INV-1003" },
    ] }));
    expect(run).toMatchObject({ matched: 3, differences: none });
    const detail = await showRun(db.pool, tenantId, run.runId, 100);
    expect(detail?.results.map((r) => r.rule)).toEqual(["reference-exact", "reference-exact", "reference-exact"]);
  });

  it("lists a credit on the statement we never received as theirs_only, first", async () => {
    const tenantId = await givenBooks(db, [["INV-2001", 10_000n]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S2", entries: [
      { amount: "100.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-2001" },
      { amount: "77.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "UNKNOWN-1" },
    ] }));
    expect(run).toMatchObject({ matched: 1, differences: { ...none, theirs_only: 1 } });
    const detail = await showRun(db.pool, tenantId, run.runId, 100);
    expect(detail?.results[0]).toMatchObject({ outcome: "theirs_only", itemKeys: ["svcr:B2"], theirsMinor: "7700", state: "open" });
  });

  it("lists a payment we booked that the bank never booked as ours_only", async () => {
    const tenantId = await givenBooks(db, [["INV-3001", 10_000n], ["INV-3002", 2_500n]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S3", entries: [{ amount: "100.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-3001" }] }));
    expect(run).toMatchObject({ matched: 1, differences: { ...none, ours_only: 1 } });
    const detail = await showRun(db.pool, tenantId, run.runId, 100);
    expect(detail?.results[0]).toMatchObject({ outcome: "ours_only", transferKeys: ["INV-3002"], oursMinor: "2500" });
  });

  it("leaves out a posting and its compensation in the same period: the bank saw only the replacement", async () => {
    const tenantId = await givenBooks(db, [["INV-3001", 20_000n], ["INV-3001-R", 20_500n]]);
    const original = transferOf(tenantId, "INV-3001", "settlement", "alice", 20_000n, { valueDate: "2026-12-01" });
    const compensation = compensationFor(original, "review:rev_test");
    expect(await post(db.pool, compensation)).toEqual({ ok: true, value: "applied" });
    await db.pool.query(
      `INSERT INTO compensation (tenant_id, compensation_key, compensated_key, corrected_key, reason, decided_by) VALUES ($1, $2, 'INV-3001', 'INV-3001-R', 'review_replace', 'review:rev_test')`,
      [tenantId, compensation.transferKey],
    );
    const run = await importAndRun(db, tenantId, camt053({ id: "S3C", entries: [
      { amount: "205.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-3001-R" },
    ] }));
    expect(run).toMatchObject({ matched: 1, differences: none });
  });

  it("reports an amount off by a cent as amount_differs with the delta", async () => {
    const tenantId = await givenBooks(db, [["INV-4001", 10_000n]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S4", entries: [{ amount: "100.01", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-4001" }] }));
    expect(run).toMatchObject({ matched: 0, differences: { ...none, amount_differs: 1 } });
    const [difference] = await listOpenDifferences(db.pool, tenantId, "settlement", 10);
    expect(difference).toMatchObject({ reason: "amount_differs", deltaMinor: 1n, itemKeys: ["svcr:B1"], transferKeys: ["INV-4001"] });
  });

  it("matches one batch credit to the 50 transfers it pays, by its parts", async () => {
    const wires = Array.from({ length: 50 }, (_, i): [string, bigint] => [`PAY-${String(i).padStart(3, "0")}`, BigInt(1_000 + i)]);
    const tenantId = await givenBooks(db, wires);
    const total = wires.reduce((sum, [, amount]) => sum + amount, 0n);
    const run = await importAndRun(db, tenantId, camt053({ id: "S5", entries: [{
      amount: `${total / 100n}.${String(total % 100n).padStart(2, "0")}`, date: "2026-12-01", svcrRef: "BATCH-1",
      parts: wires.map(([reference, amount]) => ({ amount: `${amount / 100n}.${String(amount % 100n).padStart(2, "0")}`, endToEndId: reference })),
    }] }));
    expect(run).toMatchObject({ matched: 1, differences: none });
    const detail = await showRun(db.pool, tenantId, run.runId, 10);
    expect(detail?.results[0]).toMatchObject({ outcome: "matched", rule: "batch-by-parts", itemKeys: ["svcr:BATCH-1"] });
    expect(detail?.results[0]?.transferKeys).toHaveLength(50);
  });

  it("recognises a statement imported again, and gives the same run for the same inputs", async () => {
    const tenantId = await givenBooks(db, [["INV-6001", 5_000n]]);
    const statement = camt053({ id: "S6", entries: [{ amount: "50.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-6001" }, { amount: "1.00", date: "2026-12-01", svcrRef: "B2" }] });
    const first = await importAndRun(db, tenantId, statement);
    const again = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "statement-again.xml", content: statement });
    expect(again).toMatchObject({ ok: true, value: { alreadyImported: true, items: 2 } });
    const rerun = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
    expect(rerun).toMatchObject({ ok: true, value: { runId: first.runId, alreadyRun: true, differences: first.differences } });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM recon_external_item WHERE tenant_id = $1", [tenantId]);
    expect(rows[0].n).toBe(2);
  });

  it("posts a correction once, keyed by the difference, however often it is asked for", async () => {
    const tenantId = await givenBooks(db, [["INV-7001", 10_000n]]);
    await importAndRun(db, tenantId, camt053({ id: "S7", entries: [
      { amount: "100.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-7001" },
      { amount: "30.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "NOBODY" },
    ] }));
    const [difference] = await listOpenDifferences(db.pool, tenantId, "settlement", 10);
    expect(difference?.reason).toBe("theirs_only");
    const decision = { tenantId, differenceId: difference?.differenceId ?? "", reason: "bank credit without advice; to suspense", operator: "ops-1" };
    const [a, b] = await Promise.all([correctDifference(db.pool, decision, "2026-12-02"), correctDifference(db.pool, decision, "2026-12-02")]);
    const again = await correctDifference(db.pool, decision, "2026-12-02");
    for (const result of [a, b, again]) expect(result).toMatchObject({ ok: true, value: { state: "corrected", correctionKey: `recon:${difference?.differenceId}`, decidedBy: "ops-1" } });
    const { rows } = await db.pool.query("SELECT kind FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE 'recon:%'", [tenantId]);
    expect(rows).toEqual([{ kind: "recon_correction" }]);
    expect((await balanceOf(db.pool, tenantId, "settlement"))?.balanceMinor).toBe(13_000n);
    expect((await balanceOf(db.pool, tenantId, reconSuspenseAccountOf("USD")))?.balanceMinor).toBe(3_000n);
    const statement = await accountStatement(db.pool, tenantId, "settlement", 10);
    expect(statement.lines.filter((l) => l.category === "reconciliation_correction").map((l) => [l.transferKey, l.direction, l.amountMinor]))
      .toEqual([[`recon:${difference?.differenceId}`, "D", 3_000n]]);
    expect(await explainDifference(db.pool, { ...decision, reason: "changed my mind" })).toMatchObject({ ok: false, error: { code: "RECON_DIFFERENCE_DECIDED" } });
    // The next run sees the same difference, already corrected: nothing new to decide.
    const rerun = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
    expect(rerun).toMatchObject({ ok: true, value: { differences: { theirs_only: 1 } } });
    expect(await listOpenDifferences(db.pool, tenantId, "settlement", 10)).toEqual([]);
  });

  it("warns when a statement's closing balance is not its opening plus its entries (entries may be missing)", async () => {
    const tenantId = await givenBooks(db, []);
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "short.xml", content: camt053({ id: "S8", closing: "999.00", entries: [{ amount: "5.00", date: "2026-12-01", svcrRef: "B1" }] }) });
    expect(imported).toMatchObject({ ok: true, value: { items: 1, warnings: [{ code: "RECON_BALANCE_MISMATCH", severity: "warning" }] } });
  });

  it("refuses a statement in another currency than the account, and stores nothing", async () => {
    const tenantId = await givenBooks(db, []);
    const euros = Buffer.from(camt053({ id: "S8E", entries: [{ amount: "5.00", date: "2026-12-01", svcrRef: "B1" }] }).toString("utf8").replaceAll('Ccy="USD"', 'Ccy="EUR"').replace("<Ccy>USD</Ccy>", "<Ccy>EUR</Ccy>"));
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "eur.xml", content: euros });
    expect(imported).toMatchObject({ ok: false, error: [{ code: "RECON_CURRENCY_MISMATCH" }] });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM recon_import WHERE tenant_id = $1", [tenantId]);
    expect(rows[0].n).toBe(0);
  });

  it("refuses a statement whose last entry is unreadable, and stores none of the entries read before it", async () => {
    const tenantId = await givenBooks(db, []);
    const entries = Array.from({ length: limits.recon.insertBatchItemsMax + 10 }, (_, i) => ({ amount: "1.00", date: "2026-12-01", svcrRef: `L${i}` }));
    const xml = camt053({ id: "S8L", entries }).toString("utf8");
    const last = xml.lastIndexOf('<Amt Ccy="USD">1.00</Amt>');
    const unreadable = Buffer.from(`${xml.slice(0, last)}<Amt Ccy="USD">1.001</Amt>${xml.slice(last + '<Amt Ccy="USD">1.00</Amt>'.length)}`);
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "late-bad.xml", content: unreadable });
    expect(imported).toMatchObject({ ok: false, error: [{ position: { xmlPath: expect.stringMatching(/Ntry\[\d+\]$/) } }] });
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM recon_import WHERE tenant_id = $1) AS imports, (SELECT count(*)::int FROM recon_external_item WHERE tenant_id = $1) AS items,
              (SELECT count(*)::int FROM recon_item_ref WHERE tenant_id = $1) AS refs`, [tenantId]);
    expect(rows[0]).toEqual({ imports: 0, items: 0, refs: 0 });
  });

  it("refuses a statement with an unreadable entry after the first batch, and stores nothing", async () => {
    const tenantId = await givenBooks(db, []);
    const entries = Array.from({ length: limits.recon.insertBatchItemsMax + 10 }, (_, i) => ({ amount: i === limits.recon.insertBatchItemsMax + 5 ? "1.0.0" : "1.00", date: "2026-12-01", svcrRef: `M${i}` }));
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "late-bad.xml", content: camt053({ id: "S8M", entries, closing: "999.00" }) });
    expect(imported).toMatchObject({ ok: false, error: [{ code: "AMOUNT_INVALID" }] });
    const { rows } = await db.pool.query("SELECT (SELECT count(*)::int FROM recon_import WHERE tenant_id = $1) AS imports, (SELECT count(*)::int FROM recon_external_item WHERE tenant_id = $1) AS items", [tenantId]);
    expect(rows[0]).toEqual({ imports: 0, items: 0 });
  });

  it("sets pending entries aside, and a duplicate listing on their side is named as such", async () => {
    const tenantId = await givenBooks(db, [["INV-9001", 2_000n]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S9", entries: [
      { amount: "20.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-9001" },
      { amount: "20.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-9001" },
      { amount: "8.00", date: "2026-12-01", svcrRef: "B3", status: "PDNG" },
    ] }));
    expect(run).toMatchObject({ matched: 1, differences: { ...none, duplicate_on_their_side: 1, pending: 1 } });
  });

  it("names a date beyond the window when reference and amount agree", async () => {
    const tenantId = await givenBooks(db, [["INV-10001", 2_000n, "2026-11-20"]]);
    const run = await importAndRun(db, tenantId, camt053({ id: "S10", entries: [{ amount: "20.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-10001" }] }));
    expect(run.differences).toMatchObject({ date_outside_window: 1, theirs_only: 0, ours_only: 0 });
  });

  it("imports a CSV of external items with signed amounts", async () => {
    const tenantId = await givenBooks(db, [["INV-11001", 4_200n]]);
    const csv = Buffer.from("id,date,amount,currency,reference,description\nr1,2026-12-01,42.00,USD,INV-11001,wire in\nr2,2026-12-01,-3.50,USD,,bank fee\n");
    const run = await importAndRun(db, tenantId, csv);
    expect(run).toMatchObject({ matched: 1, differences: { ...none, theirs_only: 1 } });
  });

  it("refuses an account that is not a settlement account", async () => {
    const tenantId = await givenBooks(db, []);
    const run = await runReconciliation(db.pool, { tenantId, accountId: "alice", from: "2026-12-01", to: "2026-12-01" });
    expect(run).toMatchObject({ ok: false, error: { code: "RECON_ACCOUNT_NOT_RECONCILABLE" } });
  });
});
