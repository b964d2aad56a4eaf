import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { postTransfers, setAvailableRule } from "../../src/ledger/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

/**
 * The funds check of a settled-credits account spends its available balance today
 * (docs/decisions/0109): a credit settled long ago counts, one that settles far in the future does
 * not, whatever day the test runs on. A booked account spends both, as before.
 */
describe("the funds check on the available balance of a settled-credits account", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function givenCustomer(tenant: string, rule: "booked" | "settled-credits") {
    await givenAccounts(db.pool, tenant, [["settlement", "settlement"], ["alice", "customer"],
      ["shop", "customer"]]);
    const set = await setAvailableRule(db.pool, tenant, "alice", rule);
    expect(set.ok).toBe(true);
  }

  async function givenCredits(tenant: string) {
    await post(db.pool, transferOf(tenant, "settled", "settlement", "alice", 1_000n,
      { valueDate: "2020-01-01", settlementDate: "2020-01-01" }));
    await post(db.pool, transferOf(tenant, "unsettled", "settlement", "alice", 5_000n,
      { valueDate: "2020-01-02", settlementDate: "2099-01-02" }));
  }

  const spend = (tenant: string, key: string, amountMinor: bigint) =>
    post(db.pool, transferOf(tenant, key, "alice", "shop", amountMinor,
      { valueDate: "2020-01-03", settlementDate: "2020-01-03" }));

  it("refuses a debit the settled credits do not cover, and allows one they do", async () => {
    await givenCustomer("sc", "settled-credits");
    await givenCredits("sc");
    const refused = await spend("sc", "too-much", 2_000n);
    expect(refused.ok ? "" : refused.error.code).toBe("LEDGER_INSUFFICIENT_FUNDS");
    expect(await spend("sc", "covered", 1_000n)).toEqual({ ok: true, value: "applied" });
    const after = await spend("sc", "one-more", 1n);
    expect(after.ok ? "" : after.error.code).toBe("LEDGER_INSUFFICIENT_FUNDS");
  });

  it("allows the same debit on a booked account: the unsettled credit funds it", async () => {
    await givenCustomer("bk", "booked");
    await givenCredits("bk");
    expect(await spend("bk", "too-much", 2_000n)).toEqual({ ok: true, value: "applied" });
  });

  it("lets a batch's own unsettled credit fund a later debit only on a booked account",
    async () => {
      for (const [tenant, rule] of [["bsc", "settled-credits"], ["bbk", "booked"]] as const) {
        await givenCustomer(tenant, rule);
        const batch = [
          transferOf(tenant, "in", "settlement", "alice", 3_000n,
            { valueDate: "2020-01-02", settlementDate: "2099-01-02" }),
          transferOf(tenant, "out", "alice", "shop", 3_000n, { valueDate: "2020-01-02" }),
        ].map((transfer) => ({ transfer }));
        const posted = await withTransaction(db.pool, (tx) => postTransfers(tx, batch));
        const outcomes = posted.map((p) => (p.outcome.ok ? p.outcome.value : p.outcome.error.code));
        expect(outcomes, rule).toEqual(rule === "booked" ? ["applied", "applied"]
          : ["applied", "LEDGER_INSUFFICIENT_FUNDS"]);
      }
    });
});
