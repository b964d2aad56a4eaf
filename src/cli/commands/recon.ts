import { userInfo } from "node:os";
import { basename } from "node:path";
import type { Command } from "commander";
import { decideDifferenceByNamedOperator } from "../../operators/difference-decision.ts";
import { withOperatorSecret } from "../operator-secret.ts";
import { differenceView, listOpenDifferences, type Difference } from "../../recon/differences.ts";
import { importExternalFile, importSummaryView } from "../../recon/external-items.ts";
import { fileSource } from "../../recon/statement-source.ts";
import type { ExternalFormat } from "../../recon/read-external-file.ts";
import { runDetailView, runReconciliation, runSummaryView, showRun } from "../../recon/runs.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";
import { proposalLine } from "./review.ts";

const formats: readonly ExternalFormat[] = ["camt053", "camt054", "ach", "csv"];
const SHOW_ROWS_MAX = 10_000; // rows `recon show` prints; the counts cover the rest

function differenceLine(d: Difference): string {
  return `${d.differenceId}  ${d.reason.padEnd(23)} ${d.state.padEnd(9)} delta ${moneyText(d.deltaMinor, d.currency)}  theirs [${d.itemKeys.join(" ")}]  ours [${d.transferKeys.join(" ")}]`;
}

function countsLine(differences: Record<string, number>): string {
  return Object.entries(differences).map(([reason, n]) => `${n} ${reason}`).join(", ");
}

export function registerReconCommands(program: Command): void {
  const recon = program.command("recon").description("reconciliation of settlement accounts against bank statements and partner files");
  registerImportCommand(recon);
  registerRunCommands(recon);
  registerDifferenceCommands(recon);
}

/** recon import: their side of a settlement account. */
function registerImportCommand(recon: Command): void {
  recon
    .command("import <file>")
    .description("import their side (camt.053, camt.054, CSV id,date,amount,currency,reference,description); the same file again changes nothing")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "the settlement account the statement is of")
    .option("--format <format>", `one of ${formats.join(", ")} (default: detected)`)
    .option("--json", "machine-readable output")
    .action(async (file: string, options: { tenant: string; account: string; format?: string; json?: boolean }) => {
      if (options.format !== undefined && !formats.includes(options.format as ExternalFormat)) throw new CliError(`--format must be one of ${formats.join(", ")}`, exitCodes.usage);
      // Streamed from the file (read twice: identity, then items), never held whole.
      const source = await fileSource(file);
      const imported = await withDatabase(async (db) => importExternalFile(db.pool, {
        tenantId: (await tenantOrExit(db.pool, options.tenant)).tenantId, accountId: options.account, name: basename(file), source,
        ...(options.format ? { format: options.format as ExternalFormat } : {}),
      }));
      if (!imported.ok) throw new CliError(imported.error.map((f) => `${f.code}: ${f.message}`).join("; "), exitCodes.usage);
      if (options.json) return printJson(importSummaryView(imported.value));
      const v = imported.value;
      printLine(`${basename(file)}: ${v.alreadyImported ? "imported before, nothing changed" : "imported"} (${v.format}) ${v.items} items, ${v.seenBefore} seen before, ${v.duplicates} listed twice  [${v.importId}]`);
      for (const warning of v.warnings) printLine(`  warning ${warning.code}: ${warning.message}`);
    });
}

/** recon run and recon show. */
function registerRunCommands(recon: Command): void {
  recon
    .command("run")
    .description("reconcile one settlement account over a period; prints matched and differences by reason")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "the settlement account")
    .requiredOption("--from <date>", "first day, YYYY-MM-DD")
    .requiredOption("--to <date>", "last day, YYYY-MM-DD")
    .option("--dry-run", "compute and print, store nothing")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; account: string; from: string; to: string; dryRun?: boolean; json?: boolean }) => {
      const run = await withDatabase(async (db) => runReconciliation(db.pool, {
        tenantId: (await tenantOrExit(db.pool, options.tenant)).tenantId, accountId: options.account, from: options.from, to: options.to, dryRun: options.dryRun === true,
      }));
      if (!run.ok) throw new CliError(`${run.error.code}: ${run.error.message}`, exitCodes.usage);
      const v = run.value;
      if (options.json) return printJson(runSummaryView(v));
      printLine(`${v.runId}${v.dryRun ? " (dry run)" : v.alreadyRun ? " (same inputs as before)" : ""}: ${v.matched} matched; ${countsLine(v.differences)}`);
    });
  recon
    .command("show <run>")
    .description("a run: its differences (theirs_only first) and matches, each with its rule or reason")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (runId: string, options: { tenant: string; json?: boolean }) => {
      const detail = await withDatabase(async (db) => showRun(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, runId, SHOW_ROWS_MAX));
      if (!detail) throw new CliError(`RECON_RUN_UNKNOWN: no run ${runId}`, exitCodes.usage);
      if (options.json) return printJson(runDetailView(detail));
      printLine(`${detail.runId}: account ${detail.accountId} ${detail.from}..${detail.to}: ${detail.matched} matched; ${countsLine(detail.differences)}`);
      for (const r of detail.results) {
        printLine(`  ${r.outcome.padEnd(23)} ${r.rule ?? ""}  theirs ${moneyText(r.theirsMinor, detail.currency)} [${r.itemKeys.join(" ")}]  ours ${moneyText(r.oursMinor, detail.currency)} [${r.transferKeys.join(" ")}]${r.differenceId ? `  ${r.differenceId} ${r.state}` : ""}`);
      }
      if (detail.resultsTruncated) printLine(`  ... more rows than ${SHOW_ROWS_MAX}: use --json or the HTTP API`);
    });
}

/** recon differences, correct and explain. */
function registerDifferenceCommands(recon: Command): void {
  recon
    .command("differences")
    .description("open differences, theirs_only first, then the oldest")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--account <account>", "one settlement account")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; account?: string; json?: boolean }) => {
      const open = await withDatabase(async (db) => listOpenDifferences(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account, SHOW_ROWS_MAX));
      if (options.json) return printJson({ differences: open.map(differenceView) });
      for (const d of open) printLine(differenceLine(d));
    });
  for (const verb of ["correct", "explain"] as const) {
    recon
      .command(`${verb} <difference>`)
      .description(verb === "correct"
        ? "post the correction a difference calls for (settlement against recon suspense), keyed recon:<difference id>: once, however often asked"
        : "close a difference as explained, with a reason; no money moves")
      .requiredOption("--tenant <tenant>", "tenant name or id")
      .requiredOption("--reason <reason>", "why: kept with the decision")
      .option("--operator <name>", verb === "correct" ? "who decides (default: the OS user, a name only); above the tenant's four-eyes amount required: the approver who proposes the correction, with their secret (CLEARLINE_OPERATOR_SECRET or the prompt)" : "who decides (default: the OS user)")
      .option("--json", "machine-readable output")
      .action(async (differenceId: string, options: { tenant: string; reason: string; operator?: string; json?: boolean }) => {
        // Above the four-eyes amount a correction is a proposal by the operator --operator names (docs/decisions/0035).
        const decided = await withDatabase(async (db) => {
          const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
          return withOperatorSecret(options.operator, (operatorSecret) => decideDifferenceByNamedOperator(db.pool, {
            tenantId, differenceId, verb, reason: options.reason, today: new Date().toISOString().slice(0, 10),
            operatorName: options.operator, operatorSecret, fallbackName: userInfo().username, via: "cli",
          }));
        });
        if (!decided.ok) throw new CliError(`${decided.error.code}: ${decided.error.message}`, exitCodes.usage);
        if (decided.value.kind === "proposed") return options.json ? printJson({ proposal: decided.value.proposal }) : printLine(proposalLine(decided.value.proposal));
        const difference = decided.value.difference;
        if (options.json) return printJson(differenceView(difference));
        printLine(differenceLine(difference) + (difference.correctionKey ? `  posted ${difference.correctionKey}` : ""));
      });
  }
}
