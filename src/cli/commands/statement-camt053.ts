import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import {
  asOfDateOf, dayStatement, dayStatementCamt053, type DayStatement,
} from "../../ledger/index.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

interface Camt053Options {
  tenant: string; account: string; date: string; out?: string; json?: boolean;
}

/**
 * `clearline statement camt053 --tenant T --account A --date D [--out FILE]`: the account's
 * end-of-day statement as camt.053.001.08 (opening and closing booked balances, one Ntry per
 * entry booked that day). --tenant, --account and --json are the `statement` command's own.
 */
export function registerCamt053Command(statement: Command): void {
  statement
    .command("camt053")
    .description("the account's end-of-day statement of a date as camt.053.001.08: OPBD and CLBD "
      + "booked balances, one Ntry per entry booked that day (BookgDt), its settlement date as "
      + "ValDt; written to --out, else to standard output")
    .requiredOption("--date <date>", "the statement's day, YYYY-MM-DD")
    .option("--out <file>", "write the document to this file")
    .option("--json", "a summary as JSON (with --out), or the document in it")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<Camt053Options>();
      const date = asOfDateOf(options.date, { field: "date" });
      if (!date.ok) {
        throw new CliError(`${date.error.code}: ${date.error.message}`, exitCodes.usage);
      }
      const read = await withDatabase(async (db) => dayStatement(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, options.account, date.value));
      if (read === undefined) {
        const message = `ACCOUNT_NOT_FOUND: no account ${options.account}`;
        throw new CliError(`${message} for tenant ${options.tenant}`, exitCodes.usage);
      }
      if (!read.ok) {
        throw new CliError(`${read.error.code}: ${read.error.message}`, exitCodes.usage);
      }
      const xml = dayStatementCamt053(read.value, new Date().toISOString());
      if (!xml.ok) throw new CliError(`${xml.error.code}: ${xml.error.message}`, exitCodes.failure);
      if (options.out !== undefined) writeFileSync(options.out, xml.value);
      if (options.json) printJson(summaryOf(read.value, options.out, xml.value));
      else if (options.out === undefined) process.stdout.write(xml.value);
      else printLine(`${options.out}: ${read.value.entries.length} entries, closing `
        + `${minorToDecimal(read.value.closingMinor, read.value.currency)} ${read.value.currency}`);
    });
}

function summaryOf(
  statement: DayStatement, out: string | undefined, xml: string,
): Record<string, unknown> {
  const decimal = (minor: bigint) => minorToDecimal(minor, statement.currency);
  return {
    account: statement.accountId, date: statement.date, currency: statement.currency,
    opening_booked: decimal(statement.openingMinor),
    closing_booked: decimal(statement.closingMinor),
    entries: statement.entries.length,
    ...(out === undefined ? { document: xml } : { out }),
  };
}
