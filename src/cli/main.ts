import { Command, CommanderError } from "commander";
import { assertLimitsValid } from "../config/limits.ts";
import { registerCardCommands } from "./commands/card.ts";
import { registerFilesCommands } from "./commands/files.ts";
import { registerIngestCommand } from "./commands/ingest.ts";
import { registerInspectCommand } from "./commands/inspect.ts";
import { registerIso8583Command } from "./commands/iso8583.ts";
import { registerLedgerCommands } from "./commands/ledger.ts";
import { registerMigrateCommand } from "./commands/migrate.ts";
import { registerPartnerCommands } from "./commands/partner.ts";
import { registerReviewCommands } from "./commands/review.ts";
import { registerSchemeSimCommand } from "./commands/scheme-sim.ts";
import { registerServeCommand } from "./commands/serve.ts";
import { registerStatementCommand } from "./commands/statement.ts";
import { registerTenantCommands } from "./commands/tenant.ts";
import { CliError, exitCodes } from "./exit-codes.ts";

// Every bound is checked once at start: a zero or negative bound is a build mistake, not input.
assertLimitsValid();

const program = new Command("clearline")
  .description("clearing files and card protocol in; every payment applied exactly once")
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write(text) });

registerServeCommand(program);
registerMigrateCommand(program);
registerLedgerCommands(program);
registerTenantCommands(program);
registerIso8583Command(program);
registerInspectCommand(program);
registerPartnerCommands(program);
registerIngestCommand(program);
registerFilesCommands(program);
registerReviewCommands(program);
registerStatementCommand(program);
registerCardCommands(program);
registerSchemeSimCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    process.exitCode = error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  } else if (error instanceof CliError) {
    process.stderr.write(`clearline: ${error.message}\n`);
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`clearline: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = exitCodes.failure;
  }
}
