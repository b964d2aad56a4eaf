import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { migrate, MIGRATIONS_DIR } from "../src/db/migrate.ts";
import { createPool, type Pool } from "../src/db/pool.ts";
import { urlWithDatabase } from "../src/db/url.ts";
import { verifyLedger } from "../src/ledger/index.ts";
import { percentile, type BenchReport, type BenchRow } from "./harness.ts";
import { unpackOldRelease } from "./support/old-release.ts";
import { startServeChild } from "./support/serve-child.ts";

// `npm run bench -- rolling-upgrade [--transfers=N] [--first-texts] [--check]` (docs/decisions/0083,
// docs/operations/rolling-upgrade.md). A `clearline serve` of an earlier release (OLD_RELEASE,
// whose last migration is 0021) makes its schema and serves HTTP payments; the database is given
// a ledger of 2 x N entries (default 1,000,000), as many payments and record keys, in set-based
// statements; then this release's migrator applies every later migration, one at a time, while
// the old process keeps taking payments. Printed: the longest lock wait a payment's backend was
// seen in (pg_stat_activity, sampled), the slowest payment before, during and after, every answer
// that was not a 201, how long each migration took, and `ledger verify` afterwards.
// --first-texts applies the migrations as they were first written (test/db/migrations-as-first-
// written), for comparison. --check exits 1 when a lock wait reached 1 s, an answer was not a
// 201 or ledger verify found a problem (for CI). Needs DATABASE_URL (a server the bench may create a database on).
const OLD_RELEASE = "5e524a4";
const CLIENTS = 8;                  // payments in flight at once
const QUIET_MS = 5_000;             // payments before and after the migrations
const SAMPLE_MS = 20;               // how often lock waits are looked for
const CHUNK_TRANSFERS = 25_000;     // transfers per generating transaction
const PAYERS = 64;
const FIRST_TEXTS = fileURLToPath(new URL("../test/db/migrations-as-first-written/", import.meta.url));

interface Answer { startedMs: number; latencyMs: number; status: number }

export async function run(args: string[]): Promise<BenchReport> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error("DATABASE_URL names the server to build the database on");
  const transfers = Number(/--transfers=(\d+)/.exec(args.join(" "))?.[1] ?? 500_000);
  const firstTexts = args.includes("--first-texts");
  const name = `clearline_rolling_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = urlWithDatabase(adminUrl, name);
  const release = unpackOldRelease(OLD_RELEASE);
  const pool = createPool(url, { max: 2 });
  try {
    const old = await startServeChild(url, {}, release.bin);   // migrates to its own 0021
    try {
      const apiKey = readFileSync(path.join(old.home, "default-tenant-api-key"), "utf8").trim();
      const generatedMs = await timed(() => generate(pool, transfers));
      const load = payments(old.baseUrl, apiKey);
      const sampler = lockSampler(url);
      await sleep(QUIET_MS);
      const migrationStartedMs = performance.now();
      const steps = await migrateOneByOne(url, firstTexts);
      const migrationEndedMs = performance.now();
      await sleep(QUIET_MS);
      const answers = await load.stop();
      const worstWait = await sampler.stop();
      const verified = await verifyLedger(pool);
      return report({
        check: args.includes("--check"), transfers, firstTexts, generatedMs, steps, answers, worstWait, verified,
        window: [migrationStartedMs, migrationEndedMs],
      });
    } finally {
      await old.stop();
    }
  } finally {
    await pool.end();
    release.remove();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/**
 * The history, set-based and inside the ledger's rules (0009's entry trigger checks every
 * statement: each transfer made by the transaction that posts its entries, balanced, currencies
 * of the accounts): N transfers of 2 entries from the settlement account to the payers, a payment
 * and a record key for each, and a received file for every 25th.
 */
async function generate(pool: Pool, transfers: number): Promise<void> {
  const { rows } = await pool.query<{ tenant_id: string; partner_id: string }>(
    `SELECT t.tenant_id, p.partner_id
       FROM tenant t JOIN partner p ON p.tenant_id = t.tenant_id
      WHERE t.name = 'default'`);
  const tenant = rows[0]?.tenant_id ?? "";
  const partner = rows[0]?.partner_id ?? "";
  await pool.query(
    `INSERT INTO account (tenant_id, account_id, kind, currency)
     SELECT $1, a, CASE a WHEN 'settlement' THEN 'settlement' ELSE 'customer' END, 'USD'
       FROM unnest(ARRAY['settlement', 'merchant']
                   || ARRAY(SELECT 'payer-' || g FROM generate_series(0, $2 - 1) g)) a`,
    [tenant, PAYERS]);
  for (let from = 1; from <= transfers; from += CHUNK_TRANSFERS) {
    const to = Math.min(transfers, from + CHUNK_TRANSFERS - 1);
    const client = await pool.connect();
    try {
      await client.query("SET statement_timeout = 0");   // history, not a statement of the service
      await client.query("BEGIN");
      await client.query(generateSql, [tenant, from, to, PAYERS, partner]);
      await client.query(generateEntriesSql, [tenant, from, to, PAYERS]);
      await client.query("COMMIT");
      await client.query("RESET statement_timeout");
    } finally {
      client.release();
    }
  }
  const vacuum = await pool.connect();
  try {
    await vacuum.query("SET statement_timeout = 0");
    await vacuum.query("VACUUM ANALYZE");
    await vacuum.query("RESET statement_timeout");
  } finally {
    vacuum.release();
  }
}

const generateSql = `
WITH transfers AS (
  INSERT INTO transfer (tenant_id, transfer_key, kind, value_date)
  SELECT $1, 'hist-' || g, 'payment', DATE '2026-11-01' + (g % 28)
    FROM generate_series($2::int, $3::int) g
), payments AS (
  INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency,
                       debtor_account, creditor_account, transfer_key)
  SELECT $1, 'pay_hist_' || g, 'hist-' || g, 'succeeded', 1000000, 'USD',
         'settlement', 'payer-' || (g % $4::int), 'hist-' || g
    FROM generate_series($2::int, $3::int) g
), files AS (
  INSERT INTO ingest_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
                           bytes_sha256, status)
  SELECT $1, 'fil_hist_' || g, $5, 'cli', 'hist-' || g || '.ach', 0, md5(g::text), 'done'
    FROM generate_series($2::int, $3::int) g
   WHERE g % 25 = 0
)
INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, position,
                               amount_minor, currency, value_date, transfer_key)
SELECT $1, 'ach:hist-' || g, md5(g::text), 'ach', 'credit', 'applied', 'line ' || g, 1000000,
       'USD', DATE '2026-11-01' + (g % 28), 'hist-' || g
  FROM generate_series($2::int, $3::int) g`;

const generateEntriesSql = `
INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor,
                          currency, value_date)
SELECT $1, 'hist-' || g || ':' || leg, 'hist-' || g,
       CASE leg WHEN 'D' THEN 'settlement' ELSE 'payer-' || (g % $4::int) END, leg, 1000000,
       'USD', DATE '2026-11-01' + (g % 28)
  FROM generate_series($2::int, $3::int) g, (VALUES ('D'), ('C')) AS legs (leg)`;

/** HTTP payments from CLIENTS clients, one after another each, until stopped. */
function payments(baseUrl: string, apiKey: string) {
  const answers: Answer[] = [];
  let stopping = false;
  let next = 0;
  const client = async () => {
    while (!stopping) {
      const i = next++;
      const startedMs = performance.now();
      const response = await fetch(`${baseUrl}/v1/payments`, {
        method: "POST",
        headers: {
          "content-type": "application/json", authorization: `Bearer ${apiKey}`,
          "idempotency-key": `rolling-${i}`,
        },
        body: JSON.stringify({
          client_reference: `rolling-${i}`, amount: "1.00", currency: "USD",
          debtor_account: `payer-${i % PAYERS}`, creditor_account: "merchant",
        }),
      }).catch(() => undefined);
      await response?.arrayBuffer();
      answers.push({ startedMs, latencyMs: performance.now() - startedMs, status: response?.status ?? 0 });
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  return {
    async stop(): Promise<Answer[]> {
      stopping = true;
      await Promise.all(clients);
      return answers;
    },
  };
}

interface LockWait { waitedMs: number; query: string }

/** The longest a backend other than the migrator's was seen waiting for a lock. */
function lockSampler(url: string) {
  const client = new pg.Client({ connectionString: url });
  let worst: LockWait = { waitedMs: 0, query: "" };
  let stopping = false;
  const sampling = (async () => {
    await client.connect();
    while (!stopping) {
      const { rows } = await client.query<{ waited_ms: number; query: string }>(
        `SELECT (extract(epoch FROM clock_timestamp() - query_start) * 1000)::float8 AS waited_ms, query
           FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND application_name <> 'clearline-migrate'`);
      for (const row of rows) {
        if (row.waited_ms > worst.waitedMs) worst = { waitedMs: row.waited_ms, query: row.query };
      }
      await sleep(SAMPLE_MS);
    }
    await client.end();
  })();
  return {
    async stop(): Promise<LockWait> {
      stopping = true;
      await sampling;
      return worst;
    },
  };
}

/** Each migration after the old release's, applied alone (a folder of the files up to it). */
async function migrateOneByOne(url: string, firstTexts: boolean) {
  const source = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
  cpSync(MIGRATIONS_DIR, source, { recursive: true });
  if (firstTexts) cpSync(FIRST_TEXTS, source, { recursive: true });
  const files = readdirSync(source).filter((f) => f.endsWith(".sql")).sort();
  const pool = createPool(`${url}?application_name=clearline-migrate`, { max: 1 });
  const steps: Array<{ file: string; ms: number }> = [];
  try {
    for (const [i, file] of files.entries()) {
      if (file < "0022") continue;
      const upTo = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
      for (const earlier of files.slice(0, i + 1)) cpSync(path.join(source, earlier), path.join(upTo, earlier));
      steps.push({ file, ms: await timed(() => migrate(pool, upTo)) });
      rmSync(upTo, { recursive: true, force: true });
    }
  } finally {
    await pool.end();
    rmSync(source, { recursive: true, force: true });
  }
  return steps;
}

interface Outcome {
  check: boolean;
  transfers: number;
  firstTexts: boolean;
  generatedMs: number;
  steps: Array<{ file: string; ms: number }>;
  answers: Answer[];
  worstWait: LockWait;
  verified: Awaited<ReturnType<typeof verifyLedger>>;
  window: [number, number];
}

function report(outcome: Outcome): BenchReport {
  const [from, to] = outcome.window;
  const during = outcome.answers.filter((a) => a.startedMs + a.latencyMs >= from && a.startedMs <= to);
  const before = outcome.answers.filter((a) => a.startedMs + a.latencyMs < from);
  const after = outcome.answers.filter((a) => a.startedMs > to);
  const slowest = (answers: Answer[]) => Math.max(0, ...answers.map((a) => a.latencyMs));
  const refused = outcome.answers.filter((a) => a.status !== 201);
  const rows: BenchRow[] = [
    { case: "longest lock wait of a payment's backend, sampled", value: outcome.worstWait.waitedMs,
      unit: "ms", goal: "< 1000" },
    { case: "slowest payment during the migrations", value: slowest(during), unit: "ms",
      baseline: slowest(before), baselineCase: "slowest payment before them", goal: "< 1000" },
    { case: "payments during the migrations", value: during.length, unit: "payments" },
    { case: "p99 payment during / before", value: percentile(during.map((a) => a.latencyMs), 99),
      unit: "ms", baseline: percentile(before.map((a) => a.latencyMs), 99) },
    { case: "slowest payment after, old process on the new schema", value: slowest(after), unit: "ms" },
    { case: "answers other than 201 (whole run)", value: refused.length, unit: "answers", goal: "0" },
    ...outcome.steps.map((s) => ({ case: `migration ${s.file}`, value: s.ms, unit: "ms" })),
  ];
  const statuses = [...new Set(refused.map((a) => a.status))].join(", ");
  const missed = [
    outcome.worstWait.waitedMs >= 1_000 ? `a lock wait of ${outcome.worstWait.waitedMs} ms` : "",
    refused.length > 0 ? `${refused.length} answers other than 201` : "",
    outcome.verified.ok ? "" : "ledger verify found problems",
  ].filter((m) => m !== "").join("; ");
  return {
    ...(outcome.check && missed !== "" ? { failed: missed } : {}),
    name: `rolling upgrade: ${outcome.transfers * 2} ledger entries, the old release ${OLD_RELEASE} `
      + `serving, migrations ${outcome.firstTexts ? "as first written" : "as they are"}`,
    rows,
    notes: [
      `history generated in ${(outcome.generatedMs / 1000).toFixed(1)} s`,
      `the longest lock wait was in: ${outcome.worstWait.query.replace(/\s+/g, " ").slice(0, 160)}`,
      `statuses other than 201: ${statuses || "none"}`,
      `ledger verify afterwards: ${outcome.verified.ok ? "clean" : JSON.stringify(outcome.verified.problems.slice(0, 3))}`,
    ],
  };
}
