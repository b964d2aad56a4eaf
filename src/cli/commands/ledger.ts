import type { Command } from "commander";
import { balanceOf, ledgerStats, verifyLedger } from "../../ledger/index.ts";
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
    .description("recompute every balance from entries; check every transfer balances and the projection agrees")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const report = await withDatabase((db) => verifyLedger(db.pool));
      if (options.json) printJson(report);
      else {
        printLine(`${report.ok ? "ok" : "PROBLEMS FOUND"}: ${report.tenants} tenants, ${report.accounts} accounts, ${report.transfers} transfers, ${report.entries} entries`);
        for (const problem of report.problems) printLine(`${problem.code} tenant=${problem.tenantId} ${problem.message}`);
      }
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
