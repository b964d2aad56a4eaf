import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation, showRun } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { achFile } from "./ach-files.ts";

/**
 * A partner's NACHA file as their side: the batch control totals per effective entry date and
 * direction, each matched to our transfers by the entries it adds up; returned entries as items
 * of their own. Our transfers are posted here under the entries' traces, the reference the ACH
 * ingestion gives each record it posts (its link id ach-trace:<trace>).
 */
let tenantCounter = 0;

/** A tenant with a settlement account at the partner; `credits` received (money in) and `debits` paid, by trace. */
async function givenBooks(db: TestDatabase, credits: Array<[trace: string, amountMinor: bigint]>, debits: Array<[trace: string, amountMinor: bigint]> = []): Promise<string> {
  const tenantId = `ach-recon-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  for (const [trace, amountMinor] of credits) expect((await post(db.pool, transferOf(tenantId, trace, "settlement", "alice", amountMinor, { valueDate: "2026-12-01" }))).ok).toBe(true);
  for (const [trace, amountMinor] of debits) expect((await post(db.pool, transferOf(tenantId, trace, "alice", "settlement", amountMinor, { valueDate: "2026-12-01" }))).ok).toBe(true);
  return tenantId;
}

async function importAch(db: TestDatabase, tenantId: string, content: Buffer) {
  const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "partner.ach", content, format: "ach" });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
  return imported.value;
}

async function run(db: TestDatabase, tenantId: string) {
  const result = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" });
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const day = [
  { code: "22" as const, amountMinor: 10_000n, trace: "231380100000001" },
  { code: "22" as const, amountMinor: 2_550n, trace: "231380100000002" },
  { code: "22" as const, amountMinor: 99n, trace: "231380100000003" },
  { code: "27" as const, amountMinor: 1_200n, trace: "231380100000004" },
];

describe("ACH as a partner side of a reconciliation", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("takes a file's batch totals per effective date and direction, and matches each to the transfers its entries name", async () => {
    const tenantId = await givenBooks(db, [["231380100000001", 10_000n], ["231380100000002", 2_550n], ["231380100000003", 99n]], [["231380100000004", 1_200n]]);
    const imported = await importAch(db, tenantId, achFile([{ effective: "261201", entries: day }]));
    expect(imported).toMatchObject({ format: "ach", items: 2 });
    const summary = await run(db, tenantId);
    expect(summary.matched).toBe(2);
    expect(Object.values(summary.differences).every((n) => n === 0)).toBe(true);
    const detail = await showRun(db.pool, tenantId, summary.runId, 10);
    expect(detail?.results.map((r) => [r.rule, r.theirsMinor, r.transferKeys.length])).toEqual(expect.arrayContaining([
      ["batch-by-parts", "12649", 3], ["reference-exact", "-1200", 1],
    ]));
  });

  it("lists the credit total as theirs_only and our transfers as ours_only when an entry of it was never booked by us", async () => {
    const tenantId = await givenBooks(db, [["231380100000001", 10_000n], ["231380100000002", 2_550n]], [["231380100000004", 1_200n]]);
    await importAch(db, tenantId, achFile([{ effective: "261201", entries: day }]));
    const summary = await run(db, tenantId);
    expect(summary).toMatchObject({ matched: 1, differences: { theirs_only: 1, ours_only: 2 } });
    const detail = await showRun(db.pool, tenantId, summary.runId, 10);
    expect(detail?.results[0]).toMatchObject({ outcome: "theirs_only", theirsMinor: "12649" });
  });

  it("keeps a returned entry of a return file as its own item, matched to the return we booked, its reason in the description", async () => {
    const tenantId = await givenBooks(db, [["231380109000001", 5_000n]]);
    const returns = achFile([{ effective: "261201", entries: [{ code: "21", amountMinor: 5_000n, trace: "231380109000001", returnOf: { trace: "091000010000042", reason: "R03" } }] }], "R");
    const imported = await importAch(db, tenantId, returns);
    expect(imported.items).toBe(1);
    const { rows } = await db.pool.query<{ item_key: string; description: string; direction: string }>(
      "SELECT item_key, description, direction FROM recon_external_item WHERE tenant_id = $1", [tenantId]);
    expect(rows).toEqual([{ item_key: "ach-return:231380109000001", description: "ACH return R03 of entry 091000010000042", direction: "C" }]);
    const summary = await run(db, tenantId);
    expect(summary.matched).toBe(1);
  });

  it("shows a return nobody booked as theirs_only, with the returned entry named", async () => {
    const tenantId = await givenBooks(db, []);
    await importAch(db, tenantId, achFile([{ effective: "261201", entries: [{ code: "26", amountMinor: 700n, trace: "231380109000009", returnOf: { trace: "091000010000077", reason: "R01" } }] }], "S"));
    const summary = await run(db, tenantId);
    expect(summary.differences.theirs_only).toBe(1);
    const detail = await showRun(db.pool, tenantId, summary.runId, 10);
    expect(detail?.results[0]).toMatchObject({ outcome: "theirs_only", itemKeys: ["ach-return:231380109000009"], theirsMinor: "-700" });
  });

  it("recognises the same NACHA file imported again, and changes nothing", async () => {
    const tenantId = await givenBooks(db, []);
    const file = achFile([{ effective: "261201", entries: day }]);
    await importAch(db, tenantId, file);
    expect(await importAch(db, tenantId, file)).toMatchObject({ alreadyImported: true });
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM recon_external_item WHERE tenant_id = $1", [tenantId]);
    expect(rows[0]?.n).toBe(2);
  });
});
