import { sentTogether } from "../src/db/pipeline.ts";
import { commitAfter, withTransaction, type Tx } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { postTransfer, postTransfers } from "../src/ledger/post-transfers.ts";
import { entryKeyOf, type Transfer } from "../src/ledger/transfer.ts";
import { alternate, roundsRow, throughput, type BenchReport, type BenchRow } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

const TRANSFERS_PER_ROUND = 1_500;
const ROUNDS = 3;
const CUSTOMERS = 200;
const FUNDING_MINOR = 10n ** 12n;  // every customer can pay every transfer of the run
const CONCURRENCY = [1, 4, 16];

/**
 * The posting path with its funds check actually exercised: customer-to-customer payments, so
 * every transfer locks and reads the debtor's balance. Baseline: the fewest statements that do
 * the same work by hand (lock the debtor, read its balance, insert the transfer and its entries),
 * sent raw through pg. The two sides alternate in rounds.
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(20);
  try {
    const tenantId = "bench";
    await givenFundedCustomers(db.pool, tenantId);
    const transferOf = (label: string, i: number): Transfer => ({
      tenantId, transferKey: `${label}:${i}`, kind: "payment", valueDate: "2026-12-02",
      legs: [
        { accountId: `customer-${i % CUSTOMERS}`, direction: "D", amountMinor: 100n + BigInt(i % 50), currency: "USD" },
        { accountId: `customer-${(i * 7 + 3) % CUSTOMERS}`, direction: "C", amountMinor: 100n + BigInt(i % 50), currency: "USD" },
      ],
    });
    const rows: BenchRow[] = [];
    for (const concurrency of CONCURRENCY) {
      const rounds = await alternate(ROUNDS,
        async (round) => (await throughput(TRANSFERS_PER_ROUND, concurrency, async (i) => {
          await withTransaction(db.pool, (tx) => rawFundsCheckedPost(tx, transferOf(`raw-${concurrency}-${round}`, i)));
        })).opsPerSecond,
        async (round) => (await throughput(TRANSFERS_PER_ROUND, concurrency, async (i) => {
          const result = await withTransaction(db.pool, (tx) => postTransfer(tx, transferOf(`ledger-${concurrency}-${round}`, i)));
          if (!result.ok || result.value !== "applied") throw new Error(`unexpected outcome ${JSON.stringify(result)}`);
        })).opsPerSecond);
      rows.push(roundsRow(`postTransfer, customer debtor, ${concurrency} caller(s)`, "transfers/s", "hand-written funds-checked SQL, 2 round trips", rounds));
    }
    const replays = await alternate(ROUNDS,
      async (round) => (await throughput(TRANSFERS_PER_ROUND, 16, async (i) => {
        const result = await withTransaction(db.pool, (tx) => postTransfer(tx, transferOf(`first-${round}`, i)));
        if (!result.ok || result.value !== "applied") throw new Error("first post must apply");
      })).opsPerSecond,
      async (round) => (await throughput(TRANSFERS_PER_ROUND, 16, async (i) => {
        const result = await withTransaction(db.pool, (tx) => postTransfer(tx, transferOf(`first-${round}`, i)));
        if (!result.ok || result.value !== "exists") throw new Error("replay must answer exists");
      })).opsPerSecond);
    rows.push(roundsRow("replay (exists), 16 callers", "transfers/s", "first post, 16 callers", replays));
    return { name: "ledger", rows, notes: [`${TRANSFERS_PER_ROUND} transfers per round, 2 legs each, ${CUSTOMERS} customers; ${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}`] };
  } finally {
    await db.close();
  }
}

async function givenFundedCustomers(pool: Parameters<typeof withTransaction>[0], tenantId: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await openAccount(tx, { tenantId, accountId: "settlement", kind: "settlement", currency: "USD" });
    for (let i = 0; i < CUSTOMERS; i++) await openAccount(tx, { tenantId, accountId: `customer-${i}`, kind: "customer", currency: "USD" });
    const funding = Array.from({ length: CUSTOMERS }, (_, i): Transfer => ({
      tenantId, transferKey: `fund:${i}`, kind: "payment", valueDate: "2026-12-02",
      legs: [
        { accountId: "settlement", direction: "D", amountMinor: FUNDING_MINOR, currency: "USD" },
        { accountId: `customer-${i}`, direction: "C", amountMinor: FUNDING_MINOR, currency: "USD" },
      ],
    }));
    await postTransfers(tx, funding.map((transfer) => ({ transfer })));
  });
}

/**
 * The raw minimum of a funds-checked posting, written by hand: 4 statements in two round trips on
 * the pipelining pool, as the service may send them (docs/decisions/0051): BEGIN, the lock and
 * the balance read together (the read starts after the lock is granted), then both inserts with
 * COMMIT.
 */
async function rawFundsCheckedPost(tx: Tx, t: Transfer): Promise<void> {
  const debit = t.legs[0];
  if (!debit) throw new Error("a transfer has legs");
  const [, { rows }] = await sentTogether(tx,
    () => tx.query("SELECT 1 FROM account WHERE tenant_id = $1 AND account_id = $2 FOR UPDATE", [t.tenantId, debit.accountId]),
    () => tx.query<{ balance: string }>(
      `SELECT (coalesce((SELECT credits_minor - debits_minor FROM account_balance WHERE tenant_id = $1 AND account_id = $2), 0)
             + coalesce((SELECT sum(credits_minor - debits_minor) FROM balance_delta WHERE tenant_id = $1 AND account_id = $2), 0))::text AS balance`,
      [t.tenantId, debit.accountId],
    ));
  if (BigInt(rows[0]?.balance ?? "0") < debit.amountMinor) throw new Error("bench customers are funded for the whole run");
  await commitAfter(tx, () => sentTogether(tx,
    () => tx.query("INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref) VALUES ($1, $2, $3, $4, $5)", [t.tenantId, t.transferKey, t.kind, t.valueDate, null]),
    () => tx.query(
      `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT $1, e.entry_key, $2, e.account_id, e.direction, e.amount_minor, e.currency, $3
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[]) AS e(entry_key, account_id, direction, amount_minor, currency)`,
      [t.tenantId, t.transferKey, t.valueDate, t.legs.map((_, k) => entryKeyOf(t.transferKey, k)), t.legs.map((l) => l.accountId), t.legs.map((l) => l.direction), t.legs.map((l) => l.amountMinor.toString()), t.legs.map((l) => l.currency)],
    )));
}
