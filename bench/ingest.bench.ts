import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, chmodSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Pool } from "../src/db/pool.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { fileRecords } from "../src/files/file-reader.ts";
import { createPartner, partnerAccountsOf } from "../src/partners/partners.ts";
import { transferFor, postingRuleFor, transferKeyOf } from "../src/normalize/posting-rules.ts";
import { generateAchChunks } from "../src/protocols/ach/generator.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { buildCli, runCliChild } from "./support/cli-child.ts";
import { benchDatabase } from "./support/database.ts";
import { ratioRow, roundsRow, type AlternatedRounds, type Benchmark } from "./harness.ts";

/**
 * `npm run bench -- ingest [ENTRIES] [RSS_ENTRIES]`: a generated ACH file of ENTRIES (100,000 by
 * default) ingested end to end through the CLI (`clearline ingest --json`, a child process:
 * receipt, validation pass, chunked dedup + posting + outcomes, report), in alternated rounds with
 * its baselines, each round on tenants of its own: COPY of the file's dedup marks into a table with
 * only the unique (tenant_id, natural_key) index, the ingest, COPY of the same rows the ingest
 * writes into the same tables, the same file ingested again (all duplicates, answered from the
 * first file: docs/decisions/0055), and the same records in other bytes (CRLF line endings, read
 * again). Then one ingest of RSS_ENTRIES (1,000,000 by default) for the peak-RSS goal, which needs
 * no baseline.
 */
const rssGoal = "< 200 MB";
const ROUNDS = 3;

interface IngestRun { seconds: number; peakRssMb: number; outcomes: Record<string, number>; status: string }

async function ingestThroughCli(url: string, home: string, tenant: string, file: string): Promise<IngestRun> {
  const run = await runCliChild(["ingest", file, "--tenant", tenant, "--json"], { DATABASE_URL: url, CLEARLINE_HOME: home });
  if (run.exitCode !== 0) throw new Error(`clearline ingest exited ${run.exitCode}: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as { outcomes: Record<string, number>; status: string };
  return { seconds: run.seconds, peakRssMb: run.peakRssMb, outcomes: report.outcomes, status: report.status };
}

async function generateFile(dir: string, entries: number, lineEnding: "\n" | "\r\n" = "\n"): Promise<string> {
  const file = path.join(dir, `payroll-${entries}${lineEnding === "\n" ? "" : "-crlf"}.ach`);
  await pipeline(Readable.from(generateAchChunks({ entries, batches: Math.max(1, Math.ceil(entries / 10_000)), seed: 42, lineEnding })), createWriteStream(file));
  chmodSync(file, 0o644);
  return file;
}

const csv = (values: Array<string | number | null>) => values.map((v) => (v === null ? "" : `"${String(v).replace(/"/g, '""')}"`)).join(",") + "\n";

async function write(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

/** The rows one ingestion writes per record, as CSV files for a server-side COPY (for another tenant). */
async function copyFiles(file: string, tenantId: string, partnerName: string, dir: string): Promise<string[]> {
  const tables = ["record_key", "transfer", "ledger_entry", "record_outcome", "dedup_mark"];
  const names = tables.map((t) => path.join(dir, `${t}.csv`));
  const [keys, transfers, entries, outcomes, marks] = names.map((n) => createWriteStream(n)) as [WriteStream, WriteStream, WriteStream, WriteStream, WriteStream];
  const accounts = partnerAccountsOf({ name: partnerName }, "USD");
  const stream = fileRecords(() => createReadStream(file, { highWaterMark: 1 << 20 }), "ach", { tenantId, fileId: "copy" });
  for await (const item of stream.records) {
    const record = item.record;
    if (!record) continue;
    const rule = postingRuleFor(record);
    if (!rule) continue;
    const transfer = transferFor(record, rule, accounts, undefined);
    const key = transferKeyOf(record.naturalKey);
    await write(keys, csv([tenantId, record.naturalKey, record.fingerprint, record.channel, record.kind, "applied", "copy", item.index, item.position, record.amount.toString(), record.currency, record.valueDate, key, item.linkIds[0] ?? null, item.linkIds[1] ?? null]));
    await write(transfers, csv([tenantId, key, transfer.kind, transfer.valueDate, transfer.sourceRef ?? null]));
    for (const [index, leg] of transfer.legs.entries()) await write(entries, csv([tenantId, `${key}#${index}`, key, leg.accountId, leg.direction, leg.amountMinor.toString(), leg.currency, transfer.valueDate]));
    await write(outcomes, csv([tenantId, "copy", item.index, item.position, record.naturalKey, "applied", record.kind, record.amount.toString(), record.currency, key]));
    await write(marks, csv([tenantId, record.naturalKey, record.fingerprint]));
  }
  await Promise.all([keys, transfers, entries, outcomes, marks].map((s) => new Promise((resolve) => s.end(resolve))));
  for (const n of names) chmodSync(n, 0o644);
  return names;
}

/** Baseline of the dedup marks alone: a COPY of (tenant, natural key, fingerprint) into a table whose only index is the unique one. */
async function copyDedupMarks(pool: Pool, csvPath: string, table: string): Promise<number> {
  await pool.query(`CREATE TABLE ${table} (tenant_id text NOT NULL, natural_key text NOT NULL, fingerprint text NOT NULL)`);
  await pool.query(`CREATE UNIQUE INDEX ${table}_key ON ${table} (tenant_id, natural_key)`);
  const started = process.hrtime.bigint();
  await withTransaction(pool, async (tx) => {
    await tx.query("SET LOCAL statement_timeout = 0");
    await tx.query(`COPY ${table} (tenant_id, natural_key, fingerprint) FROM '${csvPath}' WITH (FORMAT csv)`);
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** COPY of the same rows one ingestion writes, into the same tables (triggers included), one transaction. */
async function copySameRows(pool: Pool, csvs: string[]): Promise<number> {
  const started = process.hrtime.bigint();
  await withTransaction(pool, async (tx) => {
    await tx.query("SET LOCAL statement_timeout = 0");   // one COPY of a million rows outlasts the service's per-statement bound
    await tx.query(
      `COPY record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
         record_index, position, amount_minor, currency, value_date, transfer_key, link_id1,
         link_id2) FROM '${csvs[0]}' WITH (FORMAT csv)`);
    await tx.query(`COPY transfer (tenant_id, transfer_key, kind, value_date, source_ref) FROM '${csvs[1]}' WITH (FORMAT csv)`);
    await tx.query(`COPY ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) FROM '${csvs[2]}' WITH (FORMAT csv)`);
    await tx.query(
      `COPY record_outcome (tenant_id, file_id, record_index, position, natural_key, outcome, kind,
         amount_minor, currency, transfer_key) FROM '${csvs[3]}' WITH (FORMAT csv)`);
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function tenantWithPartner(pool: Pool, name: string): Promise<{ tenantId: string; partnerId: string }> {
  const tenant = await createTenant(pool, name);
  if (!tenant.ok) throw new Error(`tenant ${name}: ${tenant.error.message}`);
  const partner = await createPartner(pool, tenant.value.tenantId, "fed");
  if (!partner.ok) throw new Error(`partner of ${name}: ${partner.error.message}`);
  return { tenantId: tenant.value.tenantId, partnerId: partner.value.partnerId };
}

interface RoundRates { marks: number; ingest: number; copyRows: number; reingest: number; reread: number; ingestRssMb: number; reingestRssMb: number; seconds: string }

/**
 * One round: COPY of the marks, the ingest, COPY of the same rows, the re-ingest of the same bytes
 * (answered from the first file, decision 0055), then of the same records in other bytes (CRLF
 * line endings: read again); fresh tenants and tables.
 */
async function ingestRound(database: { pool: Pool; url: string }, dir: string, files: { file: string; crlf: string }, entries: number, round: number): Promise<RoundRates> {
  const file = files.file;
  const copy = await tenantWithPartner(database.pool, `copy-${round}`);
  await database.pool.query(
    `INSERT INTO received_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
       bytes_sha256, status) VALUES ($1, 'copy', $2, 'cli', 'copy', 0, '', 'done')`,
    [copy.tenantId, copy.partnerId]);
  const roundDir = mkdtempSync(path.join(dir, `round-${round}-`));
  chmodSync(roundDir, 0o755);
  const csvs = await copyFiles(file, copy.tenantId, "fed", roundDir);   // untimed: the baselines' input
  const bench = `bench-${round}`;
  await tenantWithPartner(database.pool, bench);

  const marksSeconds = await copyDedupMarks(database.pool, csvs[4] ?? "", `bench_dedup_mark_${round}`);
  const first = await ingestThroughCli(database.url, dir, bench, file);
  if (first.outcomes.applied !== entries) throw new Error(`round ${round}: ingest applied ${first.outcomes.applied} of ${entries}: ${JSON.stringify(first)}`);
  const copySeconds = await copySameRows(database.pool, csvs);
  const again = await ingestThroughCli(database.url, dir, bench, file);
  if (again.outcomes.duplicate !== entries) throw new Error(`round ${round}: re-ingest gave ${JSON.stringify(again.outcomes)}`);
  const reread = await ingestThroughCli(database.url, dir, bench, files.crlf);
  if (reread.outcomes.duplicate !== entries) throw new Error(`round ${round}: re-ingest in other bytes gave ${JSON.stringify(reread.outcomes)}`);
  rmSync(roundDir, { recursive: true, force: true });
  return {
    marks: entries / marksSeconds, ingest: entries / first.seconds, copyRows: entries / copySeconds, reingest: entries / again.seconds,
    reread: entries / reread.seconds, ingestRssMb: first.peakRssMb, reingestRssMb: Math.max(again.peakRssMb, reread.peakRssMb),
    seconds: `round ${round + 1}: COPY of the marks ${marksSeconds.toFixed(1)} s, ingest ${first.seconds.toFixed(1)} s, COPY of the same rows ${copySeconds.toFixed(1)} s, `
      + `re-ingest ${again.seconds.toFixed(1)} s, same records in other bytes ${reread.seconds.toFixed(1)} s`,
  };
}

function roundsOf(measured: number[], baseline: number[]): AlternatedRounds {
  return { measured, baseline, ratios: measured.map((m, i) => m / (baseline[i] as number)) };
}

export const run: Benchmark = async (args) => {
  const entries = Number(args[0] ?? 100_000);
  const rssEntries = Number(args[1] ?? 1_000_000);
  buildCli();
  const database = await benchDatabase(8);
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-ingest-bench-"));
  chmodSync(dir, 0o755);
  try {
    const file = await generateFile(dir, entries);
    const crlf = await generateFile(dir, entries, "\r\n");
    const bytes = statSync(file).size;
    const rounds: RoundRates[] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await ingestRound(database, dir, { file, crlf }, entries, round));

    await tenantWithPartner(database.pool, "rss");
    const rssFile = rssEntries === entries ? file : await generateFile(dir, rssEntries);
    const large = await ingestThroughCli(database.url, dir, "rss", rssFile);
    if (large.outcomes.applied !== rssEntries) throw new Error(`the ${rssEntries}-entry ingest gave ${JSON.stringify(large.outcomes)}`);

    const label = entries.toLocaleString("en-US");
    const rssLabel = rssEntries.toLocaleString("en-US");
    const ingestRates = rounds.map((r) => r.ingest);
    const ingestRssMb = Math.max(...rounds.map((r) => r.ingestRssMb));
    return {
      name: "ingest",
      rows: [
        roundsRow(`ingest ${label} ACH entries through the CLI`, "records/s", "COPY of the dedup marks, unique index only", roundsOf(ingestRates, rounds.map((r) => r.marks)), ">= 0.2"),
        roundsRow(`ingest ${label} ACH entries through the CLI`, "records/s", "COPY of the same rows", roundsOf(ingestRates, rounds.map((r) => r.copyRows)), ">= 0.9"),
        roundsRow("re-ingest of the same file (all duplicates; the same bytes, answered from the first file: decision 0055)", "records/s", "first ingest", roundsOf(rounds.map((r) => r.reingest), ingestRates), ">= 5"),
        roundsRow("re-ingest of the same records in other bytes (CRLF line endings: read again, decisions 0046, 0053)", "records/s", "first ingest", roundsOf(rounds.map((r) => r.reread), ingestRates), ">= 5"),
        { case: `peak RSS of clearline ingest, ${rssLabel} entries`, value: large.peakRssMb, unit: "MB", goal: rssGoal },
        ratioRow({ case: `peak RSS, ${rssLabel} entries vs ${label} (1.00x: independent of size)`, value: large.peakRssMb, unit: "MB", baseline: ingestRssMb, baselineCase: `${label} entries, highest of the rounds` }),
        { case: `peak RSS of clearline ingest, ${label} entries (highest of the rounds)`, value: ingestRssMb, unit: "MB", goal: rssGoal },
        { case: `peak RSS of the re-ingests, ${label} entries (all duplicates, both kinds, highest of the rounds)`, value: Math.max(...rounds.map((r) => r.reingestRssMb)), unit: "MB", goal: rssGoal },
      ],
      notes: [
        `file ${(bytes / 1024 / 1024).toFixed(1)} MB; ${ROUNDS} rounds, each on tenants and a marks table of its own, in this order: ${rounds.map((r) => r.seconds).join("; ")}; ${rssLabel} entries ingested in ${large.seconds.toFixed(1)} s`,
        "ingest = `clearline ingest FILE --json` in a child process, start-up included: receipt (content stored in the database) + validation pass + chunked transactions (dedup marks, transfers, entries, outcomes, progress) + report; COPY = the dedup marks, transfers, entries and outcome rows of the same records, server-side COPY in one transaction, triggers included",
        "peak RSS = the child's VmHWM read from /proc every 50 ms while it runs; the command is run as an executable (its shebang's Node flags apply, docs/decisions/0041)",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database.close();
  }
};
