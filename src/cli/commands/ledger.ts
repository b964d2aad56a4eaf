import type { Command } from "commander";
import { balanceOf, ledgerStats, verifyLedger, type VerifyReport } from "../../ledger/index.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

export function registerLedgerCommands(program: Command): void {
  program
    .command("balance")
    .description("an account's balance, derived from its entries")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "account id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; account: string; json?: boolean }) => {
      const balance = await withDatabase(async (db) => balanceOf(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account));
      if (!balance) throw new CliError(`no account ${options.account} for tenant ${options.tenant}`, exitCodes.usage);
      const view = {
        tenant: options.tenant, account: balance.accountId, kind: balance.kind, currency: balance.currency,
        balance: minorToDecimal(balance.balanceMinor, balance.currency), balanceMinor: balance.balanceMinor,
        debitsMinor: balance.debitsMinor, creditsMinor: balance.creditsMinor,
      };
      if (options.json) printJson(view);
      else printLine(`${view.account} (${view.kind}): ${view.balance} ${view.currency}`);
    });

  const ledger = program.command("ledger").description("ledger checks and statistics");
  ledger
    .command("verify")
    .description("check what is new since the last verification checkpoint: each new transfer "
      + "balances, every balance as read equals the checkpoint's sums plus the new entries'; "
      + "--full recomputes everything and checks the checkpoint itself")
    .option("--full", "every entry, and the stored checkpoint against them")
    .option("--no-checkpoint", "write no checkpoint, even when nothing is found")
    .option("--json", "machine-readable output")
    .action(async (options: { full?: boolean; checkpoint: boolean; json?: boolean }) => {
      const report = await withDatabase((db) => verifyLedger(db.pool,
        { mode: options.full ? "full" : "incremental", writeCheckpoint: options.checkpoint }));
      if (options.json) printJson(report);
      else printVerifyReport(report);
      if (!report.ok) process.exitCode = exitCodes.failure;
    });
  ledger
    .command("stats")
    .description("counts of transfers and accounts by kind, and of entries")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const stats = await withDatabase((db) => ledgerStats(db.pool));
      if (options.json) printJson(stats);
      else {
        printLine(`entries: ${stats.entries}`);
        for (const [kind, n] of Object.entries(stats.transfersByKind)) printLine(`transfers ${kind}: ${n}`);
        for (const [kind, n] of Object.entries(stats.accountsByKind)) printLine(`accounts ${kind}: ${n}`);
      }
    });
}

function printVerifyReport(report: VerifyReport): void {
  printLine(`${report.ok ? "ok" : "PROBLEMS FOUND"}: ${report.tenants} tenants, `
    + `${report.accounts} accounts, ${report.transfers} transfers, ${report.entries} entries`);
  const fresh = report.newSinceCheckpoint;
  printLine(`${report.mode}: ${fresh.transfers} transfers and ${fresh.entries} entries new since `
    + `the checkpoints of ${report.tenantsWithCheckpoint} tenants; `
    + `${report.checkpointsWritten} checkpoints written`);
  for (const problem of report.problems) {
    printLine(`${problem.code} tenant=${problem.tenantId} ${problem.message}`);
  }
}
