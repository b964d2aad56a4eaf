import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation, showRun, type RunDetail } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053, type EntrySpec } from "./statements.ts";

// Most of a run is matched in PostgreSQL (src/recon/set-matching.ts); what that step takes must be
// what the rules, tried in order on every item, would take. These cases are where a join alone
// would take a wrong pair or miss a reference.

let tenantCounter = 0;

async function givenBooks(db: TestDatabase, wires: Array<[reference: string, amountMinor: bigint, valueDate: string]>): Promise<string> {
  const tenantId = `setmatch-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [reference, amountMinor, valueDate] of wires) {
    const outcome = await post(db.pool, transferOf(tenantId, reference, "settlement", "alice", amountMinor, { valueDate }));
    if (!outcome.ok) throw new Error(outcome.error.message);
  }
  return tenantId;
}

async function imported(db: TestDatabase, tenantId: string, id: string, entries: EntrySpec[]): Promise<void> {
  const result = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: `${id}.xml`, content: camt053({ id, entries }) });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
}

async function storedRun(db: TestDatabase, tenantId: string, from: string, to: string): Promise<RunDetail> {
  const run = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from, to });
  if (!run.ok) throw new Error(run.error.message);
  const detail = await showRun(db.pool, tenantId, run.value.runId, 100);
  if (!detail) throw new Error("run not stored");
  return detail;
}

const brief = (detail: RunDetail) => detail.results.map((r) => [r.outcome, r.rule, r.itemKeys, r.transferKeys]);

describe("the set-based step of a run takes only what the rules in order would take", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("matches an entry whose reference names two of our transfers to the one closest in date, and leaves the other", async () => {
    const tenantId = await givenBooks(db, [["INV-A", 5_000n, "2026-11-29"], ["pay:ORDER-A:debit", 5_000n, "2026-12-01"]]);
    await db.pool.query(
      `INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency, debtor_account, creditor_account, transfer_key)
       VALUES ($1, 'pay_a', 'INV-A', 'succeeded', 5000, 'USD', 'settlement', 'alice', 'pay:ORDER-A:debit')`, [tenantId]);
    await imported(db, tenantId, "SM1", [{ amount: "50.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-A" }]);
    const detail = await storedRun(db, tenantId, "2026-11-29", "2026-12-01");
    expect(brief(detail)).toEqual([
      ["ours_only", null, [], ["INV-A"]],
      ["matched", "reference-exact", ["svcr:B1"], ["pay:ORDER-A:debit"]],
    ]);
  });

  it("matches one of two entries naming the same transfer, and lists the other as theirs_only", async () => {
    const tenantId = await givenBooks(db, [["INV-B", 7_000n, "2026-12-01"]]);
    await imported(db, tenantId, "SM2", [
      { amount: "70.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-B" },
      { amount: "70.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "INV-B" },
    ]);
    const detail = await storedRun(db, tenantId, "2026-12-01", "2026-12-01");
    expect(brief(detail)).toEqual([
      ["theirs_only", null, ["svcr:B2"], []],
      ["matched", "reference-exact", ["svcr:B1"], ["INV-B"]],
    ]);
  });

  it("matches an entry by a payment's client reference", async () => {
    const tenantId = await givenBooks(db, [["pay:ORDER-7:debit", 1_234n, "2026-12-01"]]);
    await db.pool.query(
      `INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency, debtor_account, creditor_account, transfer_key)
       VALUES ($1, 'pay_7', 'ORDER-7', 'succeeded', 1234, 'USD', 'settlement', 'alice', 'pay:ORDER-7:debit')`, [tenantId]);
    await imported(db, tenantId, "SM3", [{ amount: "12.34", date: "2026-12-01", svcrRef: "B1", endToEndId: "ORDER-7" }]);
    const detail = await storedRun(db, tenantId, "2026-12-01", "2026-12-01");
    expect(brief(detail)).toEqual([["matched", "reference-exact", ["svcr:B1"], ["pay:ORDER-7:debit"]]]);
  });

  it("matches an entry by a file record's end-to-end id, read without its tag", async () => {
    const tenantId = await givenBooks(db, [["iso:rec-9:post", 2_500n, "2026-12-01"]]);
    await db.pool.query(
      `INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
         record_index, position, amount_minor, currency, value_date, transfer_key, link_id1,
         link_id2)
       VALUES ($1, 'iso:rec-9', 'f', 'iso20022', 'credit', 'applied', 'fil_1', 0, '/Document', 2500, 'USD', '2026-12-01', 'iso:rec-9:post', 'uetr:4c1e9a52-0d2f-4f4e-9b3a-1f0c2e7d9a11', 'e2e:E2E-9')`,
      [tenantId]);
    await imported(db, tenantId, "SM4", [{ amount: "25.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "E2E-9" }]);
    const detail = await storedRun(db, tenantId, "2026-12-01", "2026-12-01");
    expect(brief(detail)).toEqual([["matched", "reference-exact", ["svcr:B1"], ["iso:rec-9:post"]]]);
  });

  it("matches an entry whose reference names the same transfer twice (its key and its record's end-to-end id)", async () => {
    const tenantId = await givenBooks(db, [["E2E-T", 4_200n, "2026-12-01"]]);
    await db.pool.query(
      `INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
         record_index, position, amount_minor, currency, value_date, transfer_key, link_id1,
         link_id2)
       VALUES ($1, 'iso:rec-t', 'f', 'iso20022', 'credit', 'applied', 'fil_1', 0, '/Document', 4200, 'USD', '2026-12-01', 'E2E-T', NULL, 'e2e:E2E-T')`,
      [tenantId]);
    await imported(db, tenantId, "SM8", [{ amount: "42.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "E2E-T" }]);
    const dry = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01", dryRun: true });
    const detail = await storedRun(db, tenantId, "2026-12-01", "2026-12-01");
    expect(brief(detail)).toEqual([["matched", "reference-exact", ["svcr:B1"], ["E2E-T"]]]);
    expect(dry).toMatchObject({ ok: true, value: { runId: detail.runId, matched: 1, differences: { theirs_only: 0, ours_only: 0 } } });
  });

  it("matches an entry first listed pending once a later statement books it", async () => {
    const tenantId = await givenBooks(db, [["INV-P", 900n, "2026-12-01"]]);
    await imported(db, tenantId, "SM5a", [{ amount: "9.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-P", status: "PDNG" }]);
    expect(brief(await storedRun(db, tenantId, "2026-12-01", "2026-12-01"))).toEqual([
      ["ours_only", null, [], ["INV-P"]],
      ["pending", null, ["svcr:B1"], []],
    ]);
    await imported(db, tenantId, "SM5b", [{ amount: "9.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-P" }]);
    expect(brief(await storedRun(db, tenantId, "2026-12-01", "2026-12-01"))).toEqual([["matched", "reference-exact", ["svcr:B1"], ["INV-P"]]]);
  });

  it("leaves a match made wholly outside the period to the neighbouring period's run", async () => {
    const tenantId = await givenBooks(db, [["INV-E", 100n, "2026-11-30"], ["INV-F", 200n, "2026-12-01"]]);
    await imported(db, tenantId, "SM6", [
      { amount: "1.00", date: "2026-11-30", svcrRef: "B1", endToEndId: "INV-E" },
      { amount: "2.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "INV-F" },
    ]);
    const detail = await storedRun(db, tenantId, "2026-12-01", "2026-12-01");
    expect(brief(detail)).toEqual([["matched", "reference-exact", ["svcr:B2"], ["INV-F"]]]);
    expect(detail.matched).toBe(1);
  });

  it("is another run when an input changed: a transfer posted since", async () => {
    const tenantId = await givenBooks(db, [["INV-R", 300n, "2026-12-01"]]);
    await imported(db, tenantId, "SM7", [{ amount: "3.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "INV-R" }]);
    const first = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
    const outcome = await post(db.pool, transferOf(tenantId, "INV-S", "settlement", "alice", 400n, { valueDate: "2026-12-01" }));
    expect(outcome.ok).toBe(true);
    const second = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
    expect(first).toMatchObject({ ok: true, value: { alreadyRun: false, matched: 1 } });
    expect(second).toMatchObject({ ok: true, value: { alreadyRun: false, matched: 1, differences: { ours_only: 1 } } });
    expect(second.ok && first.ok && second.value.runId !== first.value.runId).toBe(true);
  });
});
