import { readFileSync } from "node:fs";
import { Command } from "commander";
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
import { registerStatusCommand } from "./commands/status.ts";
import { registerTenantCommands } from "./commands/tenant.ts";

/** The version of the package the command runs from (the sources beside it, never a stale build). */
export function clearlineVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

/** Every subcommand, registered on a fresh program (tests list and run them in-process). */
export function buildProgram(): Command {
  const program = new Command("clearline")
    .description("clearing files and card protocol in; every payment applied exactly once")
    .version(clearlineVersion(), "-V, --version", "print the version and exit")
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  registerServeCommand(program);
  registerStatusCommand(program);
  registerMigrateCommand(program);
  registerLedgerCommands(program);
  registerTenantCommands(program);
  registerIso8583Command(program);
  registerInspectCommand(program);
  registerPartnerCommands(program);
  registerIngestCommand(program);
  registerFilesCommands(program);
  registerReviewCommands(program);
  registerCardCommands(program);
  registerSchemeSimCommand(program);
  return program;
}
