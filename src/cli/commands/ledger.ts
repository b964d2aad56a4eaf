import type { Command } from "commander";
import {
  asOfDateOf, balanceKindOf, balanceOf, balanceOfKind, balancesOnDate, ledgerStats,
  setAvailableRule, verifyLedger, type VerifyReport,
} from "../../ledger/index.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

export function registerLedgerCommands(program: Command): void {
  program
    .command("balance")
    .description("an account's balance, derived from its entries; with --as-of or --kind its "
      + "booked, settled or available balance on a date (docs/decisions/0102)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "account id")
    .option("--as-of <date>", "the date of the balance, YYYY-MM-DD (default: today, UTC)")
    .option("--kind <kind>", "booked | settled | available (default: booked)")
    .option("--json", "machine-readable output")
    .action(async (options: BalanceOptions) => {
      if (options.asOf !== undefined || options.kind !== undefined) return balanceOnDate(options);
      const balance = await withDatabase(async (db) => balanceOf(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account));
      if (!balance) throw new CliError(`no account ${options.account} for tenant ${options.tenant}`, exitCodes.usage);
      // As GET /v1/accounts/{id}/balance answers (docs/decisions/0107).
      const view = {
        account: balance.accountId, currency: balance.currency,
        balance: minorToDecimal(balance.balanceMinor, balance.currency),
      };
      if (options.json) printJson(view);
      else printLine(`${view.account} (${balance.kind}): ${view.balance} ${view.currency}`);
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
    .command("available-rule")
    .description("name the rule an account's available balance follows: booked (available = "
      + "booked) or settled-credits (credits count once settled; docs/decisions/0102)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "account id")
    .requiredOption("--rule <rule>", "booked | settled-credits")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; account: string; rule: string; json?: boolean }) => {
      const set = await withDatabase(async (db) => setAvailableRule(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account, options.rule));
      if (!set.ok) throw new CliError(`${set.error.code}: ${set.error.message}`, exitCodes.usage);
      if (options.json) printJson({ account: options.account, available_rule: set.value });
      else printLine(`${options.account}: available balance follows ${set.value}`);
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

interface BalanceOptions {
  tenant: string; account: string; asOf?: string; kind?: string; json?: boolean;
}

/** `balance --as-of D --kind K`: one balance on a date, the three beside it (0102). */
async function balanceOnDate(options: BalanceOptions): Promise<void> {
  const today = new Date().toISOString().slice(0, 10);
  const asOf = asOfDateOf(options.asOf ?? today, { field: "--as-of" });
  if (!asOf.ok) throw new CliError(`${asOf.error.code}: ${asOf.error.message}`, exitCodes.usage);
  const kind = balanceKindOf(options.kind ?? "booked", { field: "--kind" });
  if (!kind.ok) throw new CliError(`${kind.error.code}: ${kind.error.message}`, exitCodes.usage);
  const balances = await withDatabase(async (db) => balancesOnDate(db.pool,
    (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account, asOf.value));
  if (!balances) {
    const missing = `no account ${options.account} for tenant ${options.tenant}`;
    throw new CliError(missing, exitCodes.usage);
  }
  const decimal = (minor: bigint) => minorToDecimal(minor, balances.currency);
  const view = {
    tenant: options.tenant, account: balances.accountId, currency: balances.currency,
    as_of: balances.asOf, kind: kind.value, balance: decimal(balanceOfKind(balances, kind.value)),
    available_rule: balances.availableRule, booked: decimal(balances.bookedMinor),
    settled: decimal(balances.settledMinor), available: decimal(balances.availableMinor),
  };
  if (options.json) return printJson(view);
  printLine(`${view.account} ${view.kind} on ${view.as_of}: ${view.balance} ${view.currency}`
    + ` (booked ${view.booked}, settled ${view.settled}, available ${view.available}`
    + ` by rule ${view.available_rule})`);
}
