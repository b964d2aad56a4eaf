import type { Command } from "commander";
import {
  partnerSettlementTotals, settlementTotalsDocument, type PartnerSettlementTotals,
} from "../../partners/settlement-totals.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

export function registerSettlementCommands(program: Command): void {
  const settlement = program.command("settlement")
    .description("what our books expect to settle with a partner on a date");
  settlement
    .command("totals")
    .description("per currency, the credits, debits, returns and corrections of a partner that "
      + "settle on a date (by each transfer's settlement date, docs/decisions/0101), from our "
      + "side: counts, money to us and to the partner, and the net")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--partner <partner>", "partner name or id")
    .requiredOption("--date <date>", "the settlement date, YYYY-MM-DD")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; partner: string; date: string; json?: boolean }) => {
      const read = await withDatabase(async (db) => partnerSettlementTotals(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, options.partner, options.date));
      if (!read.ok) {
        throw new CliError(`${read.error.code}: ${read.error.message}`, exitCodes.usage);
      }
      if (options.json) printJson(settlementTotalsDocument(read.value));
      else printTotals(read.value);
    });
}

function printTotals(totals: PartnerSettlementTotals): void {
  printLine(`${totals.partner.name}: settling on ${totals.settlementDate}`);
  if (totals.currencies.length === 0) printLine("  nothing settles that day");
  for (const c of totals.currencies) {
    const money = (minor: bigint): string => `${minorToDecimal(minor, c.currency)} ${c.currency}`;
    printLine(`  ${c.currency} (${c.accountId}): net to us ${money(c.netToUsMinor)}`);
    for (const [name, bucket] of Object.entries(c.buckets)) {
      printLine(`    ${name.padEnd(12)} ${String(bucket.count).padStart(6)}  to us `
        + `${money(bucket.toUsMinor)}, to the partner ${money(bucket.toPartnerMinor)}`);
    }
  }
}
