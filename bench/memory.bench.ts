import { chmodSync, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Pool } from "../src/db/pool.ts";
import { createPartner } from "../src/partners/partners.ts";
import { generateAchChunks } from "../src/protocols/ach/generator.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import type { BenchReport, BenchRow } from "./harness.ts";
import { buildCli, runCliChild } from "./support/cli-child.ts";
import { benchDatabase, serverSettings } from "./support/database.ts";

const RSS_GOAL = "< 200 MB";

/**
 * Peak RSS of `clearline ingest FILE --json` (the installed command, a child process, its VmHWM
 * read from /proc every 50 ms) for a file of ENTRIES entries whose records all end one way,
 * ingested one after another into one tenant (issue 29 item 7):
 * - applied: a generated ACH file (seed 42, traces from 1);
 * - duplicate: the same records in other bytes (CRLF line endings), so every record is read,
 *   normalized and found already applied (the same bytes would be answered from the first file);
 * - suspect: the same content under other trace numbers (traces from ENTRIES + 1): new keys whose
 *   content was applied from another file inside the window, every one held for review;
 * - conflict: the first file's keys with other content (seed 43), every one quarantined.
 *
 * `npm run bench -- memory [ENTRIES]` (default 1,000,000).
 */
export async function run(args: string[]): Promise<BenchReport> {
  const entries = Number(args[0] ?? 1_000_000);
  buildCli();
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-bench-memory-"));
  chmodSync(dir, 0o755);
  const db = await benchDatabase(4);
  try {
    const settings = await serverSettings(db.pool);
    await tenantWithPartner(db.pool, "mem");
    const files: Array<[outcome: string, file: string]> = [
      ["applied", await generateFile(dir, "applied", entries, { seed: 42, firstTrace: 1 })],
      ["duplicate", await generateFile(dir, "duplicate", entries, { seed: 42, firstTrace: 1, lineEnding: "\r\n" })],
      ["suspect", await generateFile(dir, "suspect", entries, { seed: 42, firstTrace: entries + 1 })],
      ["conflict", await generateFile(dir, "conflict", entries, { seed: 43, firstTrace: 1 })],
    ];
    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const [outcome, file] of files) {
      const load = loadavg().map((l) => l.toFixed(1)).join("/");
      const run = await runCliChild(["ingest", file, "--tenant", "mem", "--json"], { DATABASE_URL: db.url, CLEARLINE_HOME: dir });
      if (run.exitCode !== 0) throw new Error(`clearline ingest exited ${run.exitCode}: ${run.stderr}`);
      const report = JSON.parse(run.stdout) as { outcomes: Record<string, number> };
      if (report.outcomes[outcome] !== entries) throw new Error(`the ${outcome} file gave ${JSON.stringify(report.outcomes)}`);
      rows.push({ case: `peak RSS of clearline ingest, ${entries.toLocaleString("en-US")} entries, every one ${outcome}`, value: run.peakRssMb, unit: "MB", goal: RSS_GOAL });
      notes.push(`${outcome}: ${run.seconds.toFixed(1)} s, load average ${load} at its start`);
    }
    notes.push(`${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}; ${settings}`);
    return { name: "memory", rows, notes };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function tenantWithPartner(pool: Pool, name: string): Promise<void> {
  const tenant = await createTenant(pool, name);
  if (!tenant.ok) throw new Error(`tenant ${name}: ${tenant.error.message}`);
  const partner = await createPartner(pool, tenant.value.tenantId, "fed");
  if (!partner.ok) throw new Error(`partner of ${name}: ${partner.error.message}`);
}

async function generateFile(dir: string, name: string, entries: number,
  options: { seed: number; firstTrace: number; lineEnding?: "\n" | "\r\n" }): Promise<string> {
  const file = path.join(dir, `${name}-${entries}.ach`);
  const batches = Math.max(1, Math.ceil(entries / 10_000));
  await pipeline(Readable.from(generateAchChunks({ entries, batches, ...options })), createWriteStream(file));
  chmodSync(file, 0o644);
  return file;
}
