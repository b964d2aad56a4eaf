import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { postTransfer, postTransfers } from "../../src/ledger/post-transfers.ts";
import { registry } from "../../src/observability/metrics.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

describe("postTransfer", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 40 });
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    await givenAccounts(db.pool, "t2", [["settlement", "settlement"], ["alice", "customer"]]);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("applies a new transfer and derives the balances from its entries", async () => {
    const result = await post(db.pool, transferOf("t1", "intent-1:credit", "settlement", "alice", 1_000n));
    expect(result).toEqual({ ok: true, value: "applied" });
    expect((await balanceOf(db.pool, "t1", "alice"))?.balanceMinor).toBe(1_000n);
    expect((await balanceOf(db.pool, "t1", "settlement"))?.balanceMinor).toBe(1_000n);
  });

  it("answers exists for the same key with the same content, and posts nothing", async () => {
    await post(db.pool, transferOf("t1", "intent-2:credit", "settlement", "alice", 70n));
    const again = await post(db.pool, transferOf("t1", "intent-2:credit", "settlement", "alice", 70n, { sourceRef: "another file" }));
    expect(again).toEqual({ ok: true, value: "exists" });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM ledger_entry WHERE transfer_key = 'intent-2:credit'");
    expect(rows[0].n).toBe(2);
  });

  it("lets a replayed credit in a batch fund nothing: the debit after it is refused", async () => {
    await givenAccounts(db.pool, "t4", [["settlement", "settlement"], ["dora", "customer"]]);
    await post(db.pool, transferOf("t4", "funding:1", "settlement", "dora", 100n));
    const outcomes = (await withTransaction(db.pool, (tx) => postTransfers(tx, [
      // a replay: dora still has 100
      { transfer: transferOf("t4", "funding:1", "settlement", "dora", 100n) },
      { transfer: transferOf("t4", "spend:1", "dora", "settlement", 150n) },
    ]))).map((posted) => posted.outcome);
    expect(outcomes[0]).toEqual({ ok: true, value: "exists" });
    expect(outcomes[1]).toMatchObject({ ok: false, error: { code: "LEDGER_INSUFFICIENT_FUNDS" } });
    expect((await balanceOf(db.pool, "t4", "dora"))?.balanceMinor).toBe(100n);
  });

  it("answers exists for a replayed debit that the balance could no longer cover", async () => {
    await givenAccounts(db.pool, "t5", [["settlement", "settlement"], ["erin", "customer"]]);
    await post(db.pool, transferOf("t5", "funding:1", "settlement", "erin", 100n));
    await post(db.pool, transferOf("t5", "spend:1", "erin", "settlement", 80n));
    await post(db.pool, transferOf("t5", "spend:2", "erin", "settlement", 20n));
    expect(await post(db.pool, transferOf("t5", "spend:1", "erin", "settlement", 80n))).toEqual({ ok: true, value: "exists" });
    expect((await balanceOf(db.pool, "t5", "erin"))?.balanceMinor).toBe(0n);
  });

  it("lets a replayed debit in a batch take none of the funds: the new debit after it passes", async () => {
    await givenAccounts(db.pool, "t6", [["settlement", "settlement"], ["finn", "customer"]]);
    await post(db.pool, transferOf("t6", "funding:1", "settlement", "finn", 100n));
    await post(db.pool, transferOf("t6", "spend:1", "finn", "settlement", 60n));
    const outcomes = (await withTransaction(db.pool, (tx) => postTransfers(tx, [
      // a replay: finn has 40 left
      { transfer: transferOf("t6", "spend:1", "finn", "settlement", 60n) },
      { transfer: transferOf("t6", "spend:2", "finn", "settlement", 40n) },
    ]))).map((posted) => posted.outcome);
    expect(outcomes).toEqual([{ ok: true, value: "exists" }, { ok: true, value: "applied" }]);
    expect((await balanceOf(db.pool, "t6", "finn"))?.balanceMinor).toBe(0n);
  });

  it("names the field that differs when a key comes back with other content", async () => {
    await post(db.pool, transferOf("t1", "intent-3:credit", "settlement", "alice", 50n));
    expect(await post(db.pool, transferOf("t1", "intent-3:credit", "settlement", "alice", 51n))).toEqual({ ok: true, value: "exists_with_different_amount" });
    expect(await post(db.pool, transferOf("t1", "intent-3:credit", "settlement", "bob", 50n))).toEqual({ ok: true, value: "exists_with_different_account" });
    expect(await post(db.pool, transferOf("t1", "intent-3:credit", "settlement", "alice", 50n, { kind: "refund" }))).toEqual({ ok: true, value: "exists_with_different_kind" });
    expect(await post(db.pool, transferOf("t1", "intent-3:credit", "settlement", "alice", 50n, { valueDate: "2026-12-03" }))).toEqual({ ok: true, value: "exists_with_different_value_date" });
    expect((await balanceOf(db.pool, "t1", "bob"))?.balanceMinor).toBe(0n);
  });

  it("applies exactly once when 32 callers post one key at the same time", async () => {
    const results = await Promise.all(
      Array.from({ length: 32 }, () => withTransaction(db.pool, (tx) => postTransfer(tx, transferOf("t1", "race:1", "settlement", "bob", 5n)))),
    );
    const outcomes = results.map((r) => (r.ok ? r.value : r.error.code));
    expect(outcomes.filter((o) => o === "applied")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "exists")).toHaveLength(31);
    expect((await balanceOf(db.pool, "t1", "bob"))?.balanceMinor).toBe(5n);
  });

  it("keeps tenants apart: the same key in two tenants is two transfers", async () => {
    expect(await post(db.pool, transferOf("t1", "shared-key", "settlement", "alice", 3n))).toEqual({ ok: true, value: "applied" });
    expect(await post(db.pool, transferOf("t2", "shared-key", "settlement", "alice", 4n))).toEqual({ ok: true, value: "applied" });
    expect((await balanceOf(db.pool, "t2", "alice"))?.balanceMinor).toBe(4n);
  });

  it("refuses to take a customer account below zero", async () => {
    const result = await post(db.pool, transferOf("t2", "overdraw:1", "alice", "settlement", 5n));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe("LEDGER_INSUFFICIENT_FUNDS");
  });

  it("lets only as many concurrent debits through as the customer's balance covers", async () => {
    await givenAccounts(db.pool, "t3", [["settlement", "settlement"], ["carol", "customer"]]);
    await post(db.pool, transferOf("t3", "fund", "settlement", "carol", 10n));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => withTransaction(db.pool, (tx) => postTransfer(tx, transferOf("t3", `spend:${i}`, "carol", "settlement", 3n)))),
    );
    expect(results.filter((r) => r.ok && r.value === "applied")).toHaveLength(3);
    expect((await balanceOf(db.pool, "t3", "carol"))?.balanceMinor).toBe(1n);
  });

  it("refuses a leg on an unknown account with a typed error naming the leg", async () => {
    const result = await post(db.pool, transferOf("t1", "unknown:1", "settlement", "nobody", 1n));
    expect(result).toMatchObject({ ok: false, error: { code: "LEDGER_ACCOUNT_UNKNOWN", position: { field: "legs[1].accountId" } } });
  });

  it("keeps the unique-index-hit metric at zero through all of the above", async () => {
    const metric = await registry.getSingleMetricAsString("clearline_ledger_entry_unique_index_hits_total");
    expect(metric).toMatch(/clearline_ledger_entry_unique_index_hits_total 0$/m);
  });
});
