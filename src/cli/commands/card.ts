import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { addCard, loadCardKeys } from "../../cards/index.ts";
import { withTransaction } from "../../db/transaction.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

/**
 * `clearline card add --tenant T --pan PAN --account A`: links a card to a customer account. The
 * card is stored as its keyed hash, BIN and last four; the PAN is printed masked, never stored.
 * `--pan -` reads the PAN from stdin, so that it stays out of the process list and shell history.
 */
export function registerCardCommands(program: Command): void {
  const card = program.command("card").description("cards of the ISO 8583 channel (stored as a keyed hash, BIN and last four)");
  card
    .command("add")
    .description("link a card to a customer account; its BIN then routes inbound messages to the tenant")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--pan <pan>", "the card number, or - to read it from stdin")
    .requiredOption("--account <account>", "customer account id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; pan: string; account: string; json?: boolean }) => {
      const pan = (options.pan === "-" ? readFileSync(0, "utf8") : options.pan).trim();
      const outcome = await withDatabase(async (db, config) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        const keys = loadCardKeys({ home: config.home, secretHex: config.cardHashSecret });
        return withTransaction(db.pool, (tx) => addCard(tx, keys, { tenantId: tenant.tenantId, pan, accountId: options.account }));
      });
      if (!outcome.ok) throw new CliError(`${outcome.error.code}: ${outcome.error.message}`, exitCodes.usage);
      const { kind, card: added } = outcome.value;
      if (options.json) printJson({ outcome: kind, card: added.panMasked, bin: added.bin, last_four: added.lastFour, account: added.accountId });
      else printLine(`card ${added.panMasked} ${kind === "created" ? "linked to" : "was already linked to"} account ${added.accountId}`);
    });
}
