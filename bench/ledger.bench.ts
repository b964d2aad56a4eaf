import { withTransaction } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { postTransfer } from "../src/ledger/post-transfer.ts";
import { entryKeyOf, type Transfer } from "../src/ledger/transfer.ts";
import { ratioRow, throughput, type BenchReport, type BenchRow } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

const TRANSFERS_PER_CASE = 3_000;
const CUSTOMERS = 200;
const CONCURRENCY = [1, 4, 16];

/**
 * postTransfer throughput at 1, 4 and 16 concurrent callers, against the same INSERT statements
 * sent raw through pg (BEGIN, INSERT transfer, INSERT entries, COMMIT) in the same run: the ratio
 * is what the ledger's checks (accounts, funds, replay comparison) cost on top of the writes.
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(20);
  try {
    const tenantId = "bench";
    await withTransaction(db.pool, async (tx) => {
      await openAccount(tx, { tenantId, accountId: "settlement", kind: "settlement", currency: "USD" });
      for (let i = 0; i < CUSTOMERS; i++) await openAccount(tx, { tenantId, accountId: `customer-${i}`, kind: "customer", currency: "USD" });
    });
    const transferOf = (label: string, i: number): Transfer => ({
      tenantId, transferKey: `${label}:${i}`, kind: "payment", valueDate: "2026-12-02",
      legs: [
        { accountId: "settlement", direction: "D", amountMinor: 100n + BigInt(i), currency: "USD" },
        { accountId: `customer-${i % CUSTOMERS}`, direction: "C", amountMinor: 100n + BigInt(i), currency: "USD" },
      ],
    });
    const rows: BenchRow[] = [];
    for (const concurrency of CONCURRENCY) {
      const raw = await throughput(TRANSFERS_PER_CASE, concurrency, async (i) => {
        const t = transferOf(`raw-${concurrency}`, i);
        await withTransaction(db.pool, async (tx) => {
          await tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref) VALUES ($1, $2, $3, $4, $5)", [t.tenantId, t.transferKey, t.kind, t.valueDate, null]);
          await tx.query(
            `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
             SELECT $1, e.entry_key, $2, e.account_id, e.direction, e.amount_minor, e.currency, $3
               FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[]) AS e(entry_key, account_id, direction, amount_minor, currency)`,
            [t.tenantId, t.transferKey, t.valueDate, t.legs.map((_, k) => entryKeyOf(t.transferKey, k)), t.legs.map((l) => l.accountId), t.legs.map((l) => l.direction), t.legs.map((l) => l.amountMinor.toString()), t.legs.map((l) => l.currency)],
          );
        });
      });
      const ledger = await throughput(TRANSFERS_PER_CASE, concurrency, async (i) => {
        const result = await withTransaction(db.pool, (tx) => postTransfer(tx, transferOf(`ledger-${concurrency}`, i)));
        if (!result.ok || result.value !== "applied") throw new Error(`unexpected outcome ${JSON.stringify(result)}`);
      });
      rows.push(ratioRow({ case: `postTransfer, ${concurrency} caller(s)`, value: ledger.opsPerSecond, unit: "transfers/s", baseline: raw.opsPerSecond, baselineCase: "raw INSERTs" }));
    }
    const replay = await throughput(TRANSFERS_PER_CASE, 16, async (i) => {
      const result = await withTransaction(db.pool, (tx) => postTransfer(tx, transferOf("ledger-16", i)));
      if (!result.ok || result.value !== "exists") throw new Error("replay must answer exists");
    });
    const firstRow = rows[rows.length - 1]!;
    rows.push(ratioRow({ case: "replay (exists), 16 callers", value: replay.opsPerSecond, unit: "transfers/s", baseline: firstRow.value, baselineCase: "first post, 16" }));
    return { name: "ledger", rows, notes: [`${TRANSFERS_PER_CASE} transfers per case, 2 legs each, ${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}`] };
  } finally {
    await db.close();
  }
}
