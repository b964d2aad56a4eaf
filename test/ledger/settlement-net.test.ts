import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate } from "../../src/db/migrate.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import type { Transfer } from "../../src/ledger/transfer.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";

interface NetRow { account_id: string; value_date: string; transfer_key: string; signed_minor: string }

async function netRows(db: TestDatabase, tenantId: string): Promise<NetRow[]> {
  const { rows } = await db.pool.query<NetRow>(
    `SELECT account_id, to_char(value_date, 'YYYY-MM-DD') AS value_date, transfer_key, signed_minor::text
       FROM settlement_transfer_net WHERE tenant_id = $1 ORDER BY account_id, value_date, transfer_key`, [tenantId]);
  return rows;
}

describe("the net per transfer on a settlement account, kept at posting (what a reconciliation run reads as our side)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["nostro", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
  });
  afterAll(async () => { await db.drop(); });

  it("keeps one row per settlement account and transfer with its debits minus credits there, and none for other accounts", async () => {
    await post(db.pool, transferOf("t1", "in:1", "settlement", "alice", 10_000n, { valueDate: "2026-12-01" }));
    await post(db.pool, transferOf("t1", "out:1", "alice", "settlement", 2_500n, { valueDate: "2026-12-02" }));
    await post(db.pool, transferOf("t1", "p2p:1", "alice", "bob", 100n));
    await post(db.pool, transferOf("t1", "sweep:1", "settlement", "nostro", 700n));
    expect(await netRows(db, "t1")).toEqual([
      { account_id: "nostro", value_date: "2026-12-02", transfer_key: "sweep:1", signed_minor: "-700" },
      { account_id: "settlement", value_date: "2026-12-01", transfer_key: "in:1", signed_minor: "10000" },
      { account_id: "settlement", value_date: "2026-12-02", transfer_key: "out:1", signed_minor: "-2500" },
      { account_id: "settlement", value_date: "2026-12-02", transfer_key: "sweep:1", signed_minor: "700" },
    ]);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });

  it("nets legs on both sides of the account, and adds a later statement's entries of the same transfer to its row", async () => {
    await givenAccounts(db.pool, "t2", [["settlement", "settlement"], ["alice", "customer"]]);
    await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t2', 'two:1', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t2', 'two:1#0', 'two:1', 'settlement', 'D', 900, 'USD', '2026-12-02'), ('t2', 'two:1#1', 'two:1', 'settlement', 'C', 300, 'USD', '2026-12-02'),
        ('t2', 'two:1#2', 'two:1', 'alice', 'C', 600, 'USD', '2026-12-02')`);
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t2', 'two:1#3', 'two:1', 'settlement', 'D', 50, 'USD', '2026-12-02'), ('t2', 'two:1#4', 'two:1', 'alice', 'C', 50, 'USD', '2026-12-02')`);
    });
    expect(await netRows(db, "t2")).toEqual([{ account_id: "settlement", value_date: "2026-12-02", transfer_key: "two:1", signed_minor: "650" }]);
  });

  it("refuses an entry dated other than its transfer, and keeps nothing of it", async () => {
    const attempt = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t1', 'skew:1', 'payment', '2026-12-02')");
      await tx.query(`INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) VALUES
        ('t1', 'skew:1#0', 'skew:1', 'settlement', 'D', 100, 'USD', '2026-12-03'), ('t1', 'skew:1#1', 'skew:1', 'alice', 'C', 100, 'USD', '2026-12-03')`);
    });
    await expect(attempt).rejects.toThrow(/entry of transfer skew:1 is dated 2026-12-03, which is not the transfer's value date/);
    expect((await netRows(db, "t1")).filter((r) => r.transfer_key === "skew:1")).toEqual([]);
  });

  it.each([
    ["an insert", "INSERT INTO settlement_transfer_net VALUES ('t1', 'settlement', '2026-12-02', 'forged', 1)"],
    ["an update", "UPDATE settlement_transfer_net SET signed_minor = 0 WHERE tenant_id = 't1'"],
    ["a delete", "DELETE FROM settlement_transfer_net WHERE tenant_id = 't1'"],
    ["a truncate", "TRUNCATE settlement_transfer_net"],
  ])("refuses %s that does not come from the ledger's entry trigger", async (_, sql) => {
    const before = await netRows(db, "t1");
    await expect(db.pool.query(sql)).rejects.toThrow(/kept by the ledger's entry trigger/);
    expect(await netRows(db, "t1")).toEqual(before);
  });

  it("is checked by verifyLedger: a kept net that disagrees with the entries is reported", async () => {
    const client = await db.pool.connect();
    let report;
    try {   // tampering by hand with the guard off, rolled back: nothing of it stays
      await client.query("BEGIN");
      await client.query("ALTER TABLE settlement_transfer_net DISABLE TRIGGER settlement_transfer_net_guard");
      await client.query("UPDATE settlement_transfer_net SET signed_minor = 9999 WHERE tenant_id = 't1' AND transfer_key = 'in:1'");
      await client.query("DELETE FROM settlement_transfer_net WHERE tenant_id = 't1' AND transfer_key = 'out:1'");
      report = await verifyLedger(client);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    expect(report.problems.map((p) => ({ code: p.code, transferKey: p.transferKey, message: p.message }))).toEqual([
      { code: "LEDGER_SETTLEMENT_NET_MISMATCH", transferKey: "in:1", message: "settlement account settlement, transfer in:1: net kept 9999, entries 10000" },
      { code: "LEDGER_SETTLEMENT_NET_MISMATCH", transferKey: "out:1", message: "settlement account settlement, transfer out:1: net kept none, entries -2500" },
    ]);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });
});

/** A transfer with its entries, in the columns every schema since 0001 has. */
async function postOnOldSchema(db: TestDatabase, transfer: Transfer): Promise<void> {
  await withTransaction(db.pool, async (tx) => {
    await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ($1, $2, $3, $4)",
      [transfer.tenantId, transfer.transferKey, transfer.kind, transfer.valueDate]);
    // one statement: the ledger's statement trigger wants a transfer's legs together (0030)
    const legs = transfer.legs;
    await tx.query(
      `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT $1, $2 || '#' || (l.ordinality - 1), $2, l.account_id, l.direction, l.amount_minor, l.currency, $3::date
         FROM unnest($4::text[], $5::text[], $6::bigint[], $7::text[]) WITH ORDINALITY
              AS l(account_id, direction, amount_minor, currency, ordinality)`,
      [transfer.tenantId, transfer.transferKey, transfer.valueDate, legs.map((l) => l.accountId),
        legs.map((l) => l.direction), legs.map((l) => l.amountMinor.toString()), legs.map((l) => l.currency)]);
  });
}

describe("migration 0022 keeps the net of what was posted before it", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createEmptyDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("fills the rows from the entries already on settlement accounts", async () => {
    const before0022 = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
    for (const name of readdirSync(MIGRATIONS_DIR).filter((n) => n < "0022")) cpSync(path.join(MIGRATIONS_DIR, name), path.join(before0022, name));
    await migrate(db.pool, before0022);
    await givenAccounts(db.pool, "t1", [["settlement", "settlement"], ["alice", "customer"]]);
    // Posted as a release of that schema posted: the posting path of today writes columns
    // added since (transfer.settlement_date, migration 0035).
    await postOnOldSchema(db, transferOf("t1", "in:1", "settlement", "alice", 10_000n, { valueDate: "2026-12-01" }));
    await postOnOldSchema(db, transferOf("t1", "out:1", "alice", "settlement", 2_500n));

    await migrate(db.pool);
    expect(await netRows(db, "t1")).toEqual([
      { account_id: "settlement", value_date: "2026-12-01", transfer_key: "in:1", signed_minor: "10000" },
      { account_id: "settlement", value_date: "2026-12-02", transfer_key: "out:1", signed_minor: "-2500" },
    ]);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });
});
