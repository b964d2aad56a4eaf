import { Command, CommanderError } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { assertLimitsValid } from "../config/limits.ts";
import { topLevelCommandIn, topLevelCommands } from "./command-table.ts";
import { CliError, exitCodes } from "./exit-codes.ts";

// Every bound is checked once at start: a zero or negative bound is a build mistake, not input.
assertLimitsValid();

const program = new Command("clearline")
  .description("clearing files and card protocol in; every payment applied exactly once")
  .version(packageJson.version, "-V, --version")
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write(text) });

// Only the module of the command being run is loaded; the help screen lists every command from
// the table without loading any of them.
const args = process.argv.slice(2);
const chosen = topLevelCommandIn(args);
if (chosen) {
  (await chosen.load())(program);
} else {
  for (const command of topLevelCommands) program.command(command.name).description(command.summary);
}

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
