import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, settlementOf } from "./support.ts";

describe("ISO 20022 messages from other versions and partners, through ingest", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("posts a pain.008 direct debit to the debtor's account (debit debtor, credit settlement)", async () => {
    const scene = await givenScene(db.pool, "dd");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "funding", kind: "settlement", currency: "EUR" });
    for (const [member, iban] of [["member-one", "DE89370400440532013000"], ["member-two", "DE89370400440532013001"]] as const) {
      await openAccount(db.pool, { tenantId: scene.tenantId, accountId: member, kind: "customer", currency: "EUR" });
      await addAccountAlias(db.pool, scene.tenantId, `iban:${iban}`, member);
      const seed = transferOf(scene.tenantId, `seed-${member}`, "funding", member, 10_000n);
      expect((await post(db.pool, { ...seed, legs: seed.legs.map((leg) => ({ ...leg, currency: "EUR" })) })).ok).toBe(true);
    }
    const report = await ingest(db.pool, scene, fixture("iso20022/pain008-v08.xml"), "pain008.xml");
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 2 } });
    const money = await balances(db.pool, scene.tenantId);
    expect([money["member-one"], money["member-two"]]).toEqual([10_000n - 3_990n, 10_000n - 3_990n]);
    expect(money[settlementOf(scene).replace(/USD$/, "EUR")]).toBe(-(3_990n + 3_990n));
  });

  it("posts an equivalent amount in its own currency and rejects the one whose debtor account is in another currency", async () => {
    const scene = await givenScene(db.pool, "eqvt");
    const report = await ingest(db.pool, scene, fixture("iso20022/pain001-equivalent-amount.xml"), "eqvt.xml");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 1, rejected: 1 });
    expect(report.errors).toEqual([expect.objectContaining({ code: "ISO20022_FX_RATE_UNAVAILABLE" })]);
    const { rows } = await db.pool.query<{ amount_minor: string; currency: string }>(
      `SELECT amount_minor::text, currency FROM record_outcome WHERE tenant_id = $1
         AND outcome = 'applied'`, [scene.tenantId]);
    expect(rows).toEqual([{ amount_minor: "10000", currency: "EUR" }]);
  });

  it("records a pain.002 without namespace and reports the namespace warning", async () => {
    const scene = await givenScene(db.pool, "nons");
    const report = await ingest(db.pool, scene, fixture("iso20022/pain002-no-namespace.xml"), "pain002.xml");
    expect(report).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 1 } });
    expect(report.warnings).toEqual([expect.objectContaining({ code: "ISO20022_NAMESPACE_MISSING" })]);
  });
});
