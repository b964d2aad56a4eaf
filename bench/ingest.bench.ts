import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, chmodSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createPool } from "../src/db/pool.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { fileRecords } from "../src/files/file-reader.ts";
import { createPartner, partnerAccountsOf } from "../src/partners/partners.ts";
import { ingestArrival } from "../src/files/pipeline.ts";
import { transferFor, postingRuleFor, transferKeyOf } from "../src/normalize/posting-rules.ts";
import { generateAchChunks } from "../src/protocols/ach/generator.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { benchDatabase } from "./support/database.ts";
import { ratioRow, type Benchmark } from "./harness.ts";

/**
 * `npm run bench -- ingest [ENTRIES]`: a generated ACH file (1,000,000 entries by default)
 * ingested end to end (receipt, validation pass, chunked dedup + posting + outcomes) in a child
 * process, against COPY of the same rows (dedup marks, transfers, entries, outcomes) into the same
 * tables in the same run; then the same file again (all duplicates) against the first ingest;
 * and the child's peak RSS.
 */
const self = fileURLToPath(import.meta.url);

interface ChildResult { seconds: number; maxRssMb: number; outcomes: Record<string, number>; status: string }

async function child(url: string, tenantId: string, partnerId: string, file: string): Promise<ChildResult> {
  const pool = createPool(url, { max: 4 });
  const started = process.hrtime.bigint();
  const report = await ingestArrival(pool, { tenantId, partnerId, source: "cli", name: path.basename(file), content: createReadStream(file, { highWaterMark: 1 << 20 }) });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.end();
  if (!report.ok) throw new Error(report.error.message);
  return { seconds, maxRssMb: process.resourceUsage().maxRSS / 1024, outcomes: report.value.outcomes, status: report.value.status };
}

function measure(url: string, tenantId: string, partnerId: string, file: string): ChildResult {
  const out = spawnSync(process.execPath, ["--import", "tsx", self, "--child", url, tenantId, partnerId, file], { encoding: "utf8", maxBuffer: 1 << 20 });
  if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split("\n").at(-1) ?? "{}") as ChildResult;
}

const csv = (values: Array<string | number | null>) => values.map((v) => (v === null ? "" : `"${String(v).replace(/"/g, '""')}"`)).join(",") + "\n";

async function write(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

/** The rows one ingestion writes per record, as CSV files for a server-side COPY (for another tenant). */
async function copyFiles(file: string, tenantId: string, partnerName: string, dir: string): Promise<string[]> {
  const names = ["ingest_record_key", "transfer", "ledger_entry", "ingest_outcome"].map((t) => path.join(dir, `${t}.csv`));
  const [keys, transfers, entries, outcomes] = names.map((n) => createWriteStream(n)) as [WriteStream, WriteStream, WriteStream, WriteStream];
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
  }
  await Promise.all([keys, transfers, entries, outcomes].map((s) => new Promise((resolve) => s.end(resolve))));
  for (const n of names) chmodSync(n, 0o644);
  return names;
}

export const run: Benchmark = async (args) => {
  const entries = Number(args[0] ?? 1_000_000);
  const database = await benchDatabase(8);
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-ingest-bench-"));
  chmodSync(dir, 0o755);
  const file = path.join(dir, `payroll-${entries}.ach`);
  try {
    await pipeline(Readable.from(generateAchChunks({ entries, batches: Math.max(1, Math.ceil(entries / 10_000)), seed: 42 })), createWriteStream(file));
    const bytes = statSync(file).size;
    const tenant = await createTenant(database.pool, "bench");
    const other = await createTenant(database.pool, "copy");
    if (!tenant.ok || !other.ok) throw new Error("tenants");
    const partner = await createPartner(database.pool, tenant.value.tenantId, "fed");
    const copyPartner = await createPartner(database.pool, other.value.tenantId, "fed");
    if (!partner.ok || !copyPartner.ok) throw new Error("partners");
    await database.pool.query(
      "INSERT INTO ingest_file (tenant_id, file_id, partner_id, source, original_name, size_bytes, bytes_sha256, status) VALUES ($1, 'copy', $2, 'cli', 'copy', 0, '', 'done')",
      [other.value.tenantId, copyPartner.value.partnerId]);

    // Baseline: COPY of the same rows into the same tables (triggers included), one transaction.
    const csvs = await copyFiles(file, other.value.tenantId, "fed", dir);
    const copyStarted = process.hrtime.bigint();
    await withTransaction(database.pool, async (tx) => {
      await tx.query("SET LOCAL statement_timeout = 0");   // one COPY of a million rows outlasts the service's per-statement bound
      await tx.query(`COPY ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id, record_index, position, amount_minor, currency, value_date, transfer_key, link_id1, link_id2) FROM '${csvs[0]}' WITH (FORMAT csv)`);
      await tx.query(`COPY transfer (tenant_id, transfer_key, kind, value_date, source_ref) FROM '${csvs[1]}' WITH (FORMAT csv)`);
      await tx.query(`COPY ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date) FROM '${csvs[2]}' WITH (FORMAT csv)`);
      await tx.query(`COPY ingest_outcome (tenant_id, file_id, record_index, position, natural_key, outcome, kind, amount_minor, currency, transfer_key) FROM '${csvs[3]}' WITH (FORMAT csv)`);
    });
    const copySeconds = Number(process.hrtime.bigint() - copyStarted) / 1e9;

    const first = measure(database.url, tenant.value.tenantId, partner.value.partnerId, file);
    if (first.outcomes.applied !== entries) throw new Error(`first ingest applied ${first.outcomes.applied} of ${entries}: ${JSON.stringify(first)}`);
    const again = measure(database.url, tenant.value.tenantId, partner.value.partnerId, file);
    if (again.outcomes.duplicate !== entries) throw new Error(`re-ingest gave ${JSON.stringify(again.outcomes)}`);
    const label = entries.toLocaleString("en-US");
    return {
      name: "ingest",
      rows: [
        ratioRow({ case: `ingest ${label} ACH entries end to end`, value: entries / first.seconds, unit: "records/s", baseline: entries / copySeconds, baselineCase: "COPY of the same rows", goal: ">= 0.5" }),
        ratioRow({ case: "re-ingest of the same file (all duplicates)", value: entries / again.seconds, unit: "records/s", baseline: entries / first.seconds, baselineCase: "first ingest", goal: ">= 2" }),
        { case: "peak RSS of the ingesting process", value: first.maxRssMb, unit: "MB", goal: "< 250 MB" },
        { case: "peak RSS of the re-ingesting process", value: again.maxRssMb, unit: "MB", goal: "< 250 MB" },
      ],
      notes: [
        `file ${(bytes / 1024 / 1024).toFixed(1)} MB; ingest ${first.seconds.toFixed(1)} s, re-ingest ${again.seconds.toFixed(1)} s, COPY ${copySeconds.toFixed(1)} s`,
        "ingest = receipt (content stored in the database) + validation pass + chunked transactions (dedup marks, transfers, entries, outcomes, progress); COPY = the dedup marks, transfers, entries and outcome rows of the same records, server-side COPY in one transaction, triggers included",
        "each ingest runs in its own child process (node --import tsx); RSS from getrusage maxRSS",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database.close();
  }
};

if (process.argv[2] === "--child" && process.argv[1] && path.resolve(process.argv[1]) === self) {
  const [url, tenantId, partnerId, file] = process.argv.slice(3);
  const result = await child(url ?? "", tenantId ?? "", partnerId ?? "", file ?? "");
  console.log(JSON.stringify(result));
  process.exit(0);
}
