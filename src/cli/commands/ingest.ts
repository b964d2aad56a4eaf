import { createReadStream, statSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../../config/config.ts";
import { limits } from "../../config/limits.ts";
import { partnerCalendar } from "../../config/partner-calendar-config.ts";
import { dryRun, type DryRunReport } from "../../files/dry-run.ts";
import { partnerForIngest } from "../../partners/partners.ts";
import { ingestArrival } from "../../files/pipeline.ts";
import {
  repeatsDecidedNote, type DroppedRecords, type FileReport,
} from "../../files/report.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import type { FileFormat } from "../../protocols/detect-format.ts";
import { withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";
import { tenantOrExit } from "../context.ts";

interface IngestCliOptions {
  tenant: string;
  partner?: string;
  format: "auto" | FileFormat;
  dryRun?: boolean;
  json?: boolean;
}

/** A one-line progress bar on a terminal: records done, records per second, time left. */
function progressBar(name: string): { update(done: number, total: number): void; end(): void } {
  if (!process.stderr.isTTY) return { update: () => undefined, end: () => undefined };
  const started = Date.now();
  let last = 0;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const seconds = Math.max((now - started) / 1000, 0.001);
      const rate = done / seconds;
      const share = total > 0 ? Math.min(done / total, 1) : 1;
      const width = 24;
      const filled = Math.round(share * width);
      const eta = rate > 0 ? Math.ceil((total - done) / rate) : 0;
      process.stderr.write(`\r${name} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.round(share * 100)}% ${done}/${total} records ${Math.round(rate)}/s ETA ${eta}s `);
    },
    end() {
      process.stderr.write("\n");
    },
  };
}

function summaryLine(report: FileReport): string {
  const o = report.outcomes;
  return `${report.name}: ${report.status} (${report.format ?? "unknown format"}, ${report.records} records): ${o.applied} applied, ${o.duplicate} duplicate, ${o.conflict} conflict, ${o.suspect} suspect, ${o.rejected} rejected, ${o.orphan} orphan  [file ${report.file_id}]${report.correction_of ? ` a correction of ${report.correction_of}` : ""}${report.same_bytes_as ? ` the same bytes as ${report.same_bytes_as}` : ""}`;
}

/** Records the corrected file applied and the correction leaves out: listed with key and amount, never reversed. */
export function printDropped(dropped: DroppedRecords | null | undefined): void {
  if (!dropped || dropped.count === 0) return;
  printLine(`  ${dropped.note} (${dropped.count} of ${dropped.original_file_id}):`);
  for (const r of dropped.records) printLine(`    ${r.position}: ${r.kind ?? "record"} ${minorToDecimal(BigInt(r.amount_minor), r.currency)} ${r.currency} ${r.natural_key}`);
  if (dropped.count > dropped.records.length) printLine(`    ... and ${dropped.count - dropped.records.length} more (--json lists the first ${dropped.records.length})`);
}

function printDryRun(report: DryRunReport, json: boolean | undefined): void {
  if (json) return printJson(report);
  const v = report.verdicts;
  printLine(`${report.name}: dry run, ${report.status === "would_reject" ? "the file would be REJECTED" : "would apply"} (${report.format ?? "unknown format"}, ${report.records} records): ${v.new} new, ${v.already_applied} already applied, ${v.changed} changed, ${v.suspect} suspect, ${v.rejected} rejected${report.correction_of ? `  a correction of ${report.correction_of}` : ""}`);
  for (const e of report.errors) printLine(`  error ${e.code} ${e.line !== undefined ? `line ${e.line}` : e.xml_path ?? ""}${e.field ? ` ${e.field}` : ""}: ${e.message}`);
  for (const r of report.records_listed) if (r.verdict !== "already_applied") printLine(`  ${r.position}: ${r.verdict}${r.natural_key ? ` ${r.natural_key}` : ""}${r.detail ? ` (${r.detail})` : ""}`);
  printDropped(report.dropped_records);
  if (report.dropped_records_not_checked) printLine(`  records absent from the correction were not looked for: the file has more than ${limits.ingest.dropCheckRecordsMax} records (ingest it: its report names them)`);
}

export function registerIngestCommand(program: Command): void {
  program
    .command("ingest <files...>")
    .description("receive and apply ACH or ISO 20022 files; each record applied exactly once (exit 2 when a file is rejected)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--partner <partner>", "partner name or id (default: the tenant's only partner)")
    .option("--format <format>", "auto, ach or iso20022", "auto")
    .option("--dry-run", "show what the files would do (new, already applied, changed) without storing or posting")
    .option("--json", "one JSON object per file")
    .action(async (files: string[], options: IngestCliOptions) => {
      if (!["auto", "ach", "iso20022"].includes(options.format)) throw new CliError(`--format must be auto, ach or iso20022`, exitCodes.usage);
      for (const file of files) {
        try {
          if (!statSync(file).isFile()) throw new Error("not a file");
        } catch {
          throw new CliError(`${file}: not a readable file`, exitCodes.usage);
        }
      }
      const loaded = loadConfig();
      const suspectWindowHours = loaded.ok ? loaded.value.ingest.suspectWindowHours : undefined;
      const format = options.format === "auto" ? undefined : options.format;
      let rejected = false;
      await withDatabase(async (db) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        for (const file of files) {
          const name = path.basename(file);
          if (options.dryRun) {
            printDryRun(await dryRun(db.pool, tenant.tenantId, () => createReadStream(file), { name, ...(format ? { format } : {}) }), options.json);
            continue;
          }
          const partner = await partnerForIngest(db.pool, tenant.tenantId, options.partner);
          if (!partner.ok) throw new CliError(`${partner.error.code}: ${partner.error.message}`, exitCodes.usage);
          const bar = options.json ? { update: () => undefined, end: () => undefined } : progressBar(name);
          // The partner's settlement calendar, when configuration names one (0092, 0101).
          const achCalendar = loaded.ok
            ? partnerCalendar(loaded.value, tenant, partner.value) : undefined;
          const report = await ingestArrival(db.pool, { tenantId: tenant.tenantId, partnerId: partner.value.partnerId, source: "cli", name, content: createReadStream(file) }, {
            ...(format ? { format } : {}), ...(suspectWindowHours ? { suspectWindowHours } : {}), onProgress: (done, total) => bar.update(done, total),
            ...(achCalendar === undefined ? {} : { achCalendar }),
          });
          bar.end();
          if (!report.ok) throw new CliError(`${file}: ${report.error.code}: ${report.error.message}`, exitCodes.usage);
          if (report.value.status === "rejected") rejected = true;
          if (options.json) printJson(report.value);
          else {
            printLine(summaryLine(report.value));
            const decided = repeatsDecidedNote(report.value);
            if (decided) printLine(`  ${decided}`);
            for (const e of report.value.errors.slice(0, 20)) printLine(`  error ${e.code} ${e.line !== undefined ? `line ${e.line}` : e.xml_path ?? ""}${e.field ? ` ${e.field}` : ""}: ${e.message}`);
            printDropped(report.value.dropped_records);
          }
        }
      });
      if (rejected) process.exitCode = exitCodes.usage;
    });
}
