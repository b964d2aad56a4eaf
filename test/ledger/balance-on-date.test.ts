import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import {
  accountStatement, balancesOnDate, compensationsOf, postTransfers, setAvailableRule, storedTransfers,
  transfersWithLegs,
} from "../../src/ledger/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

/** What the account's entries say by hand: credits less debits of a customer, dated by `column`. */
async function handSum(db: TestDatabase, tenant: string, account: string, asOf: string, column: "value" | "settles"): Promise<bigint> {
  const date = column === "value" ? "e.value_date" : "coalesce(t.settlement_date, t.value_date)";
  const { rows } = await db.pool.query<{ sum: string }>(
    `SELECT coalesce(sum(CASE e.direction WHEN 'C' THEN e.amount_minor ELSE -e.amount_minor END), 0)::text AS sum
       FROM ledger_entry e JOIN transfer t USING (tenant_id, transfer_key)
      WHERE e.tenant_id = $1 AND e.account_id = $2 AND ${date} <= $3`, [tenant, account, asOf]);
  return BigInt(rows[0]?.sum ?? "0");
}

describe("settlement dates and balances on a date (docs/decisions/0101, 0102)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 40 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("stores a transfer's settlement date and shows it on the statement and the transfer", async () => {
    await givenAccounts(db.pool, "s1", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("s1", "sat:credit", "settlement", "alice", 500n,
      { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    const [line] = (await accountStatement(db.pool, "s1", "alice", 10)).lines;
    expect(line).toMatchObject({ valueDate: "2026-12-05", settlementDate: "2026-12-07", settlementDateRecorded: true });
    const [shown] = await transfersWithLegs(db.pool, "s1", ["sat:credit"]);
    expect(shown).toMatchObject({ settlementDate: "2026-12-07", settlementDateRecorded: true });
  });

  it("stores the value date as the settlement date of a transfer that names none", async () => {
    await givenAccounts(db.pool, "s2", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("s2", "plain", "settlement", "alice", 1n, { valueDate: "2026-12-03" }));
    const { rows } = await db.pool.query("SELECT to_char(settlement_date, 'YYYY-MM-DD') AS d FROM transfer WHERE tenant_id = 's2'");
    expect(rows).toEqual([{ d: "2026-12-03" }]);
  });

  it("reads a transfer posted before migration 0035 (no settlement date) as settling on its value date", async () => {
    await givenAccounts(db.pool, "s3", [["settlement", "settlement"], ["alice", "customer"]]);
    await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('s3', 'old', 'payment', '2026-11-28')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
        VALUES ('s3', 'old#0', 'old', 'settlement', 'D', 70, 'USD', '2026-11-28'), ('s3', 'old#1', 'old', 'alice', 'C', 70, 'USD', '2026-11-28')`);
    });
    const [line] = (await accountStatement(db.pool, "s3", "alice", 10)).lines;
    expect(line).toMatchObject({ settlementDate: "2026-11-28", settlementDateRecorded: false });
    expect((await balancesOnDate(db.pool, "s3", "alice", "2026-11-28"))?.settledMinor).toBe(70n);
    expect((await balancesOnDate(db.pool, "s3", "alice", "2026-11-27"))?.settledMinor).toBe(0n);
  });

  it("does not make a replay with another settlement date a conflict: the first date stays", async () => {
    await givenAccounts(db.pool, "s4", [["settlement", "settlement"], ["alice", "customer"]]);
    const first = transferOf("s4", "k", "settlement", "alice", 9n, { settlementDate: "2026-12-04" });
    await post(db.pool, first);
    expect(await post(db.pool, { ...first, settlementDate: "2026-12-07" })).toEqual({ ok: true, value: "exists" });
    expect((await storedTransfers(db.pool, "s4", ["k"])).get("k")?.valueDate).toBe("2026-12-02");
    const [line] = (await accountStatement(db.pool, "s4", "alice", 10)).lines;
    expect(line?.settlementDate).toBe("2026-12-04");
  });

  it("gives a credit booked on Saturday and settled on Monday a booked balance on Saturday and a settled one only on Monday", async () => {
    await givenAccounts(db.pool, "b1", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("b1", "fri", "settlement", "alice", 1_000n, { valueDate: "2026-12-04", settlementDate: "2026-12-04" }));
    await post(db.pool, transferOf("b1", "sat", "settlement", "alice", 250n, { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    const saturday = await balancesOnDate(db.pool, "b1", "alice", "2026-12-05");
    const monday = await balancesOnDate(db.pool, "b1", "alice", "2026-12-07");
    expect([saturday?.bookedMinor, saturday?.settledMinor]).toEqual([1_250n, 1_000n]);
    expect([monday?.bookedMinor, monday?.settledMinor]).toEqual([1_250n, 1_250n]);
    for (const day of ["2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06", "2026-12-07"]) {
      const balances = await balancesOnDate(db.pool, "b1", "alice", day);
      expect(balances?.bookedMinor).toBe(await handSum(db, "b1", "alice", day, "value"));
      expect(balances?.settledMinor).toBe(await handSum(db, "b1", "alice", day, "settles"));
    }
  });

  it("keeps the available balance equal to the booked one while the account's rule is booked", async () => {
    await givenAccounts(db.pool, "b2", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("b2", "sat", "settlement", "alice", 250n, { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    const saturday = await balancesOnDate(db.pool, "b2", "alice", "2026-12-05");
    expect(saturday).toMatchObject({ availableRule: "booked", bookedMinor: 250n, availableMinor: 250n });
  });

  it("leaves unsettled credits out of the available balance under settled-credits, and counts a debit from its booking", async () => {
    await givenAccounts(db.pool, "b3", [["settlement", "settlement"], ["alice", "customer"]]);
    expect(await setAvailableRule(db.pool, "b3", "alice", "settled-credits")).toEqual({ ok: true, value: "settled-credits" });
    await post(db.pool, transferOf("b3", "fund", "settlement", "alice", 1_000n, { valueDate: "2026-12-01", settlementDate: "2026-12-01" }));
    await post(db.pool, transferOf("b3", "in", "settlement", "alice", 300n, { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    await post(db.pool, transferOf("b3", "out", "alice", "settlement", 200n, { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    const saturday = await balancesOnDate(db.pool, "b3", "alice", "2026-12-05");
    expect(saturday).toMatchObject({ bookedMinor: 1_100n, settledMinor: 1_000n, availableMinor: 800n });
    const monday = await balancesOnDate(db.pool, "b3", "alice", "2026-12-07");
    expect(monday).toMatchObject({ bookedMinor: 1_100n, settledMinor: 1_100n, availableMinor: 1_100n });
  });

  it("settles a compensation with the posting it corrects: the two sum to nothing on every date", async () => {
    await givenAccounts(db.pool, "s5", [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf("s5", "sat", "settlement", "alice", 400n,
      { valueDate: "2026-12-05", settlementDate: "2026-12-07" }));
    const compensation = (await compensationsOf(db.pool, "s5", ["sat"], "test")).get("sat");
    expect(compensation?.settlementDate).toBe("2026-12-07");
    if (compensation) await post(db.pool, compensation);
    for (const day of ["2026-12-05", "2026-12-07"]) {
      expect(await balancesOnDate(db.pool, "s5", "alice", day)).toMatchObject({ bookedMinor: 0n, settledMinor: 0n });
    }
  });

  it("refuses an available rule it does not know, naming the two", async () => {
    await givenAccounts(db.pool, "b4", [["alice", "customer"]]);
    const refused = await setAvailableRule(db.pool, "b4", "alice", "whenever");
    expect(refused).toMatchObject({ ok: false, error: { code: "LEDGER_AVAILABLE_RULE_UNKNOWN" } });
  });

  it("keeps the settled balance exact while 32 postings commit concurrently: every read is a sum of whole committed transfers", async () => {
    await givenAccounts(db.pool, "c1", [["settlement", "settlement"], ["alice", "customer"]]);
    let posting = true;
    const reads: bigint[] = [];
    const reader = (async () => {
      while (posting) {
        const read = await balancesOnDate(db.pool, "c1", "alice", "2026-12-07");
        reads.push(read?.settledMinor ?? -1n);
      }
    })();
    // Each credit of 100 settles Monday and brings a debit of 1 booked and settled Monday too.
    const outcomes = await Promise.all(Array.from({ length: 32 }, (_, i) => withTransaction(db.pool, (tx) =>
      postTransfers(tx, [
        { transfer: transferOf("c1", `in:${i}`, "settlement", "alice", 100n, { valueDate: "2026-12-05", settlementDate: "2026-12-07" }) },
        { transfer: transferOf("c1", `fee:${i}`, "alice", "settlement", 1n, { valueDate: "2026-12-07", settlementDate: "2026-12-07" }) },
      ]))));
    posting = false;
    await reader;
    expect(outcomes.flat().every((p) => p.outcome.ok && p.outcome.value === "applied")).toBe(true);
    expect(reads.length).toBeGreaterThan(0);
    // a read that saw half of a batch (a credit without its fee) would not be a multiple of 99
    for (const read of reads) expect(read % 99n).toBe(0n);
    const final = await balancesOnDate(db.pool, "c1", "alice", "2026-12-07");
    expect(final?.settledMinor).toBe(32n * 99n);
    expect(final?.settledMinor).toBe(await handSum(db, "c1", "alice", "2026-12-07", "settles"));
    expect((await balancesOnDate(db.pool, "c1", "alice", "2026-12-06"))?.settledMinor).toBe(0n);
  });
});
