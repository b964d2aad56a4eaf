import type { Command } from "commander";
import type { Queryable } from "../../db/pool.ts";
import {
  fileOutcomes, fileReport, listFiles, repeatsDecidedNote, tenantsOfFile, tenantsWithFiles,
} from "../../files/report.ts";
import { withDatabase } from "../context.ts";
import { printDropped } from "./ingest.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";
import { tenantOrExit } from "../context.ts";

const STATUSES = ["received", "processing", "done", "rejected"];

async function tenantOfFile(db: Queryable, fileId: string, tenant: string | undefined): Promise<string> {
  if (tenant !== undefined) return (await tenantOrExit(db, tenant)).tenantId;
  const tenants = await tenantsOfFile(db, fileId);
  const [only] = tenants;
  if (tenants.length === 1 && only !== undefined) return only;
  const several = tenants.length > 1 ? " (several tenants: name one with --tenant)" : "";
  throw new CliError(`FILE_NOT_FOUND: no file ${fileId}${several}`, exitCodes.usage);
}

export function registerFilesCommands(program: Command): void {
  program
    .command("files")
    .description("received files, newest first, with status and outcome counts")
    .option("--tenant <tenant>", "tenant name or id (default: every tenant)")
    .option("--status <status>", "received, processing, done or rejected")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant?: string; status?: string; json?: boolean }) => {
      if (options.status !== undefined && !STATUSES.includes(options.status)) throw new CliError(`--status must be one of ${STATUSES.join(", ")}`, exitCodes.usage);
      const files = await withDatabase(async (db) => {
        const tenants = options.tenant !== undefined
          ? [(await tenantOrExit(db.pool, options.tenant)).tenantId]
          : await tenantsWithFiles(db.pool);
        const all = [];
        for (const tenantId of tenants) all.push(...(await listFiles(db.pool, tenantId, options.status === undefined ? {} : { status: options.status })));
        return all.sort((a, b) => b.received_at.localeCompare(a.received_at));
      });
      if (options.json) printJson({ files });
      else for (const f of files) {
        const o = f.outcomes;
        printLine(`${f.file_id}  ${f.received_at}  ${f.status.padEnd(10)} ${f.source.padEnd(11)} ${f.partner}  ${f.name}  records=${f.records} applied=${o.applied} duplicate=${o.duplicate} conflict=${o.conflict} suspect=${o.suspect} rejected=${o.rejected} orphan=${o.orphan}`);
      }
    });

  const file = program.command("file").description("one received file");
  file
    .command("show <id>")
    .description("a file's report and its per-record outcomes with positions")
    .option("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (fileId: string, options: { tenant?: string; json?: boolean }) => {
      const shown = await withDatabase(async (db) => {
        const tenantId = await tenantOfFile(db.pool, fileId, options.tenant);
        const report = await fileReport(db.pool, tenantId, fileId);
        if (!report) throw new CliError(`FILE_NOT_FOUND: no file ${fileId}`, exitCodes.usage);
        return { ...report, record_outcomes: await fileOutcomes(db.pool, tenantId, fileId) };
      });
      if (options.json) return printJson(shown);
      const o = shown.outcomes;
      printLine(`${shown.file_id} ${shown.name}: ${shown.status} (${shown.format ?? "unknown format"}, ${shown.records} records, from ${shown.source}, partner ${shown.partner}, received ${shown.received_at})`);
      if (shown.correction_of) printLine(`  a correction of ${shown.correction_of}`);
      if (shown.same_bytes_as) printLine(`  the same bytes as ${shown.same_bytes_as}: its records answered this file's`);
      printLine(`  ${o.applied} applied, ${o.duplicate} duplicate, ${o.conflict} conflict, ${o.suspect} suspect, ${o.rejected} rejected, ${o.orphan} orphan`);
      const decided = repeatsDecidedNote(shown);
      if (decided) printLine(`  ${decided}`);
      for (const e of shown.errors) printLine(`  error ${e.code} ${e.line !== undefined ? `line ${e.line}` : e.xml_path ?? ""}${e.field ? ` ${e.field}` : ""}: ${e.message}`);
      for (const w of shown.warnings) printLine(`  warning ${w.code} ${w.line !== undefined ? `line ${w.line}` : w.xml_path ?? ""}: ${w.message}`);
      printDropped(shown.dropped_records);
      for (const r of shown.record_outcomes) {
        const settles = r.settlement_date === null ? "" : `  settles ${r.settlement_date}`;
        printLine(`  #${r.index} ${r.position}  ${r.outcome.padEnd(9)} ${r.kind ?? ""} ${moneyText(r.amount_minor, r.currency)}  ${r.natural_key ?? ""}${settles}${r.code ? `  ${r.code}` : ""}${r.original_ref ? `  original=${r.original_ref}` : ""}${r.detail ? `  (${r.detail})` : ""}`);
      }
    });
}
