import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import {
  accountKinds, accountStatement, balanceOf, statementDocument,
} from "../../ledger/index.ts";
import { registerCamt053Command } from "./statement-camt053.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

/** How a statement line names its category: a technical correction is never shown as a refund or a return. */
const categoryLabel = { technical_correction: "technical correction", reconciliation_correction: "reconciliation correction", refund: "refund", return: "return", posting: "" } as const;

export function registerStatementCommand(program: Command): void {
  const statement = program
    .command("statement")
    .description(`an account's latest entries (up to ${limits.ledger.statementEntriesMax}), oldest first: transfer key, kind, origin; corrections marked`)
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "account id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; account: string; json?: boolean }) => {
      const read = await withDatabase(async (db) => {
        const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
        const balance = await balanceOf(db.pool, tenantId, options.account);
        if (!balance) return undefined;
        return { balance, statement: await accountStatement(db.pool, tenantId, options.account, limits.ledger.statementEntriesMax) };
      });
      if (!read) throw new CliError(`ACCOUNT_NOT_FOUND: no account ${options.account} for tenant ${options.tenant}`, exitCodes.usage);
      if (options.json) return printJson(statementDocument(read.balance, read.statement));
      const { balance, statement } = read;
      printLine(`${balance.accountId} (${balance.kind}): ${minorToDecimal(balance.balanceMinor, balance.currency)} ${balance.currency}${statement.truncated ? `  (latest ${statement.lines.length} entries)` : ""}`);
      for (const line of statement.lines) {
        // signed as the balance is: by the account's normal side
        const amount = `${line.direction === accountKinds[balance.kind].normalSide ? "+" : "-"}${minorToDecimal(line.amountMinor, line.currency)}`;
        const label = categoryLabel[line.category];
        printLine(`  ${line.valueDate}  ${amount.padStart(14)} ${line.currency}  ${line.kind.padEnd(24)}${label ? ` [${label}]` : ""}  ${line.transferKey}  from ${line.sourceRef ?? "-"}`);
      }
    });
  registerCamt053Command(statement);
}
