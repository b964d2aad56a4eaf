import { loadavg } from "node:os";
import { createPool, type Pool } from "../src/db/pool.ts";
import { urlWithDatabase } from "../src/db/url.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { median, type BenchReport, type BenchRow } from "./harness.ts";
import { buildCli, runCliChild } from "./support/cli-child.ts";
import { benchDatabase, serverSettings } from "./support/database.ts";

const TENANT = "bench";
const CUSTOMERS = 10_000;
const GENERATOR_STATEMENT_TIMEOUT_MS = 600_000;   // a chunk takes 5-20 s beside other work
const CHUNK_TRANSFERS = 25_000;   // one transaction of the generator: 50,000 entries

/**
 * `clearline ledger verify` (incremental: what is new since the checkpoint) against
 * `clearline ledger verify --full` on the same ledger in the same round (docs/decisions/0089).
 * The ledger (default 4,000,000 entries: settlement to one of 10,000 customers, two legs a
 * transfer) is written by set-based SQL through the ledger's own triggers, then folded by the
 * projector and verified once in full (the first checkpoint). Each round then adds NEW entries
 * (default 100,000), folds them, and runs `verify --full --no-checkpoint`, then `verify`, which
 * reads the same NEW entries and writes the next checkpoint: both the installed command in a
 * child process, start-up included.
 *
 * `npm run bench -- verify [ENTRIES] [NEW] [ROUNDS] [--reuse-database=NAME]`
 */
export async function run(args: string[]): Promise<BenchReport> {
  const reuse = args.find((a) => a.startsWith("--reuse-database="))?.slice("--reuse-database=".length);
  const [entriesArg, freshArg, roundsArg] = args.filter((a) => !a.startsWith("--"));
  const fresh = Number(freshArg ?? 100_000);
  const rounds = Number(roundsArg ?? 3);
  buildCli();
  const db = reuse ? reusedDatabase(reuse) : await benchDatabase(4);
  try {
    const settings = await serverSettings(db.pool);
    const entries = reuse ? await entriesOf(db.pool) : Number(entriesArg ?? 4_000_000);
    const generated = await timed(async () => { if (!reuse) await generateLedger(db.pool, 0, entries / 2); });
    const folded = await timed(() => fold(db.pool));
    await db.pool.query("VACUUM ANALYZE");
    const env = { DATABASE_URL: db.url };
    const first = await verify(env, ["--full"]);
    const full: number[] = [];
    const incremental: number[] = [];
    const loads: string[] = [];
    let next = entries / 2;
    for (let round = 0; round < rounds; round++) {
      await generateLedger(db.pool, next, fresh / 2);
      next += fresh / 2;
      await fold(db.pool);
      loads.push(loadavg().map((l) => l.toFixed(1)).join("/"));
      full.push((await verify(env, ["--full"], false)).seconds);
      incremental.push((await verify(env, [])).seconds);
    }
    const ratios = incremental.map((s, i) => s / (full[i] ?? s));
    const rows: BenchRow[] = [{
      case: `ledger verify after ${fresh.toLocaleString("en-US")} new entries on ${entries.toLocaleString("en-US")}`
        + ` (${rounds} rounds, ratio per round ${ratios.map((r) => r.toFixed(3)).join(" / ")})`,
      value: median(incremental), unit: "s", baseline: median(full), baselineCase: "ledger verify --full, same ledger",
      ratio: median(ratios), goal: "< 0.1",
    }];
    return {
      name: "verify", rows,
      notes: [
        `${entries.toLocaleString("en-US")} entries generated in ${generated.seconds.toFixed(1)} s (set-based, through the triggers),`
          + ` ${folded.value.deltasFolded.toLocaleString("en-US")} delta rows folded in ${folded.seconds.toFixed(1)} s;`
          + ` first full verify (no checkpoint yet) ${first.seconds.toFixed(1)} s`,
        `seconds per round: full ${full.map((s) => s.toFixed(2)).join(" / ")}; incremental ${incremental.map((s) => s.toFixed(2)).join(" / ")};`
          + ` each run is the installed command (start-up included), the ledger grows by ${fresh.toLocaleString("en-US")} entries a round`,
        `load average (1/5/15 min) at each round: ${loads.join(", ")}; ${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}; ${settings}`,
      ],
    };
  } finally {
    await db.close();
  }
}

/** The projector's step over every delta row at once: the bench's backlog, folded in one pass. */
function fold(pool: Pool) {
  return advanceProjection(pool, TENANT, { stepsMax: 1, batchDeltasMax: 100_000_000 });
}

async function entriesOf(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entry WHERE tenant_id = $1", [TENANT]);
  return rows[0]?.n ?? 0;
}

/**
 * A ledger an earlier run of this bench generated and left (`--reuse-database=NAME` on the same
 * server): the rounds add to it. Kept afterwards, for the next run; drop it by hand.
 */
function reusedDatabase(name: string): { pool: Pool; url: string; close(): Promise<void> } {
  const url = urlWithDatabase(process.env.DATABASE_URL ?? "", name);
  const pool = createPool(url, { max: 4 });
  // Folding a backlog of millions of delta rows in one step takes minutes, past the pool's bound.
  pool.on("connect", (client) => { client.query("SET statement_timeout = 0").catch(() => undefined); });
  return { pool, url, close: () => pool.end() };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = process.hrtime.bigint();
  const value = await work();
  return { value, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

async function verify(env: Record<string, string>, args: string[], checkpoint = true): Promise<{ seconds: number }> {
  const run = await runCliChild(["ledger", "verify", "--json", ...args, ...(checkpoint ? [] : ["--no-checkpoint"])], env);
  const report = JSON.parse(run.stdout || "{}") as { ok?: boolean; checkpointsWritten?: number };
  if (run.exitCode !== 0 || report.ok !== true) throw new Error(`ledger verify ${args.join(" ")} failed: ${run.stdout.slice(0, 2000)} ${run.stderr}`);
  if (checkpoint && report.checkpointsWritten !== 1) throw new Error("ledger verify wrote no checkpoint");
  return { seconds: run.seconds };
}

/**
 * Transfers `from` .. `from + count - 1`, each settlement -> customer (i mod 10,000), 2 entries,
 * written `CHUNK_TRANSFERS` to a transaction by two set-based statements: the transfers, then
 * their entries, which the ledger's statement trigger checks and turns into delta rows and nets.
 * Keys are zero-padded so that each chunk appends to the key indexes, as a time-ordered key would.
 */
async function generateLedger(pool: Pool, from: number, count: number): Promise<void> {
  if (from === 0) {
    await withTransaction(pool, async (tx) => {
      await openAccount(tx, { tenantId: TENANT, accountId: "settlement", kind: "settlement", currency: "USD" });
      await tx.query(
        `INSERT INTO account (tenant_id, account_id, kind, currency)
         SELECT $1, 'customer-' || i, 'customer', 'USD' FROM generate_series(0, $2 - 1) i`, [TENANT, CUSTOMERS]);
    });
  }
  for (let start = from; start < from + count; start += CHUNK_TRANSFERS) {
    const end = Math.min(from + count, start + CHUNK_TRANSFERS) - 1;
    await withTransaction(pool, async (tx) => {
      await tx.query(
        `INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref)
         SELECT $1, 'gen:' || lpad(i::text, 10, '0'), 'payment', DATE '2026-11-01' + (i % 30)::int, 'bench'
           FROM generate_series($2::bigint, $3::bigint) i`, [TENANT, start, end]);
      await tx.query(
        `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor,
                                   currency, value_date)
         SELECT $1, 'gen:' || lpad(i::text, 10, '0') || '#' || leg, 'gen:' || lpad(i::text, 10, '0'),
                CASE leg WHEN 0 THEN 'settlement' ELSE 'customer-' || (i % $4) END,
                CASE leg WHEN 0 THEN 'D' ELSE 'C' END, 100 + i % 50, 'USD', DATE '2026-11-01' + (i % 30)::int
           FROM generate_series($2::bigint, $3::bigint) i CROSS JOIN (VALUES (0), (1)) legs(leg)`,
        [TENANT, start, end, CUSTOMERS]);
    }, { localSettings: { statement_timeout: GENERATOR_STATEMENT_TIMEOUT_MS } });
  }
}
