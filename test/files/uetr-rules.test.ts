import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, transferCount } from "./support.ts";

/**
 * UETR rules (protocols/iso20022/uetr-rules.json, docs/decisions/0023): legs of one payment are
 * linked, the first seen posted; a UETR under other payment content is held as a suspect.
 */
describe("records sharing a UETR", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function outcomeRows(tenantId: string, fileId: string) {
    const { rows } = await db.pool.query<{ outcome: string; code: string | null; detail: string | null; transfer_key: string | null }>(
      `SELECT outcome, code, detail, transfer_key FROM record_outcome WHERE tenant_id = $1
         AND file_id = $2 ORDER BY record_index`, [tenantId, fileId]);
    return rows;
  }

  async function transferKeys(tenantId: string, fileId: string) {
    return (await outcomeRows(tenantId, fileId)).map((r) => r.transfer_key);
  }

  async function originalRefs(tenantId: string, fileId: string) {
    const { rows } = await db.pool.query<{ original_ref: string | null }>(
      `SELECT original_ref FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         ORDER BY record_index`, [tenantId, fileId]);
    return rows.map((r) => r.original_ref);
  }

  it("posts the first leg of a payment and links the next leg (same UETR and EndToEndId, other agents) from another file without posting it", async () => {
    const scene = await givenScene(db.pool, "legs");
    const first = await ingest(db.pool, scene, fixture("iso20022/pacs008-chain-a-b.xml"), "chain-a-b.xml");
    expect(first.outcomes).toEqual({ ...noOutcomes, applied: 1 });
    const second = await ingest(db.pool, scene, fixture("iso20022/pacs008-chain-b-c.xml"), "chain-b-c.xml");
    expect(second.outcomes).toEqual({ ...noOutcomes, applied: 1 });
    expect(await outcomeRows(scene.tenantId, second.file_id)).toEqual([{
      outcome: "applied", code: "RECORD_PAYMENT_LEG_LINKED", transfer_key: null,
      detail: expect.stringContaining("iso20022:pacs.008:uetr:7c9e6679-7425-40de-944b-e07fc1f90ae7:BANKDEFFXXX:BANKGB2LXXX"),
    }]);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
    expect((await balances(db.pool, scene.tenantId))[`partner.${scene.partner.name}.settlement.EUR`]).toBe(250_000n);
    // The linked leg's dedup record is its outcome row (docs/decisions/0053): it names the first leg's posting.
    expect(await originalRefs(scene.tenantId, second.file_id)).toEqual(await transferKeys(scene.tenantId, first.file_id));
  });

  it("holds a record whose UETR already names another payment, with a finding naming both, and posts nothing for it", async () => {
    const scene = await givenScene(db.pool, "reuse");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-chain-a-b.xml"), "chain-a-b.xml");
    const reused = await ingest(db.pool, scene, fixture("iso20022/pacs008-uetr-reused.xml"), "reused.xml");
    expect(reused.outcomes).toEqual({ ...noOutcomes, suspect: 1 });
    const [row] = await outcomeRows(scene.tenantId, reused.file_id);
    const held = { outcome: "suspect", code: "RECORD_UETR_REUSED", transfer_key: null };
    expect(row).toMatchObject(held);
    expect(row?.detail).toContain("iso20022:pacs.008:uetr:7c9e6679-7425-40de-944b-e07fc1f90ae7:BANKDEFFXXX:BANKGB2LXXX");
    expect(row?.detail).toContain("iso20022:pacs.008:uetr:7c9e6679-7425-40de-944b-e07fc1f90ae7:BANKFRPPXXX:BANKITMMXXX");
    expect(row?.detail).toMatch(/differs in endToEndId, amountMinor/);
    const { rows: reviews } = await db.pool.query(
      `SELECT reason, matched_ref FROM record_review WHERE tenant_id = $1 AND file_id = $2`,
      [scene.tenantId, reused.file_id]);
    expect(reviews).toEqual([{ reason: "suspect", matched_ref: "iso20022:pacs.008:uetr:7c9e6679-7425-40de-944b-e07fc1f90ae7:BANKDEFFXXX:BANKGB2LXXX" }]);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
  });

  it("applies the same rules to legs and a reused UETR inside one file", async () => {
    const scene = await givenScene(db.pool, "onefile");
    const report = await ingest(db.pool, scene, fixture("iso20022/pacs008-legs-and-reused-uetr.xml"), "legs.xml");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 2, suspect: 1 });
    expect((await outcomeRows(scene.tenantId, report.file_id)).map((row) => [row.outcome, row.code])).toEqual([
      ["applied", "RECORD_COUNTERPARTY_UNRESOLVED"], ["applied", "RECORD_PAYMENT_LEG_LINKED"],
      ["suspect", "RECORD_UETR_REUSED"],
    ]);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
    const again = await ingest(db.pool, scene, fixture("iso20022/pacs008-legs-and-reused-uetr.xml"), "legs-again.xml");
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 3 });
  });
});
