import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { minorToDecimal, currencyByCode } from "../../protocols/iso4217/currency.ts";
import { inspectAch } from "../../normalize/inspect-ach.ts";
import { inspectIso20022 } from "../../normalize/inspect-iso20022.ts";
import type { InspectReport } from "../../normalize/inspect-report.ts";
import { detectFormat } from "../../protocols/detect-format.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

/** Bounded by the larger channel bound: inspect reads the whole file into memory. */
const INSPECT_FILE_BYTES_MAX = Math.max(limits.iso20022.fileBytesMax, 512 * 1024 * 1024);

export function inspectFile(file: string, format: "auto" | "ach" | "iso20022" = "auto"): InspectReport {
  const size = statSync(file).size;
  if (size > INSPECT_FILE_BYTES_MAX) throw new CliError(`${file} is ${size} bytes; inspect reads at most ${INSPECT_FILE_BYTES_MAX}`, exitCodes.usage);
  const bytes = readFileSync(file);
  const detected = format === "auto" ? detectFormat(bytes.subarray(0, 64)) : format;
  const fileName = path.basename(file);
  if (detected === "ach") return inspectAch(bytes, { fileName });
  if (detected === "iso20022") return inspectIso20022(bytes, { fileName });
  throw new CliError(`${file}: FORMAT_UNKNOWN: neither a NACHA ACH file nor an ISO 20022 XML document`, exitCodes.usage);
}

function amountText(amountMinor: string, currency: string): string {
  return currencyByCode(currency) ? `${minorToDecimal(BigInt(amountMinor), currency)} ${currency}` : `${amountMinor} (minor units)`;
}

export function registerInspectCommand(program: Command): void {
  program
    .command("inspect <file>")
    .description("read an ACH or ISO 20022 file without a database: identity, findings with positions, records with natural keys")
    .option("--format <format>", "auto, ach or iso20022", "auto")
    .option("--json", "machine-readable output")
    .action((file: string, options: { format: "auto" | "ach" | "iso20022"; json?: boolean }) => {
      const report = inspectFile(file, options.format);
      const errors = report.findings.filter((f) => f.severity === "error");
      if (options.json) printJson(report);
      else {
        printLine(`${file}: ${report.format}${report.messageType ? ` ${report.messageType}` : ""}, ${report.recordCount} records, ${errors.length} errors, ${report.findings.length - errors.length} warnings`);
        for (const [name, value] of Object.entries(report.identity)) printLine(`  ${name}: ${value}`);
        for (const f of report.findings) {
          const where = f.position.xmlPath ?? (f.position.line !== undefined ? `line ${f.position.line}${f.position.field ? ` ${f.position.field}` : ""}` : "");
          printLine(`  ${f.severity} ${f.code} ${where}: ${f.message}`);
        }
        for (const r of report.records) printLine(`  ${r.position} ${r.kind} ${amountText(r.amountMinor, r.currency)} key=${r.naturalKey} fp=${r.fingerprint.slice(0, 12)}`);
        if (report.records.length < report.recordCount) printLine(`  ... ${report.recordCount - report.records.length} more records`);
      }
      if (errors.length > 0) process.exitCode = exitCodes.usage;
    });
}
