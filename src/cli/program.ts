import { readFileSync } from "node:fs";
import { Command } from "commander";
import { topLevelCommandIn, topLevelCommands } from "./command-table.ts";

/** The version of the package the command runs from (the sources beside it, never a stale build). */
export function clearlineVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

/**
 * The program for one run: only the module of the command named in `args` is loaded (serve loads
 * fastify and pg, inspect the XML stack), and the help screen lists every command from the table
 * without loading any (docs/decisions/0013). `all` registers every command (tests list them).
 */
export async function buildProgram(options: { args?: readonly string[]; all?: boolean } = {}): Promise<Command> {
  const program = new Command("clearline")
    .description("clearing files and card protocol in; every payment applied exactly once")
    .version(clearlineVersion(), "-V, --version", "print the version and exit")
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  const chosen = options.all ? undefined : topLevelCommandIn(options.args ?? []);
  if (options.all) {
    for (const load of new Set(topLevelCommands.map((command) => command.load))) (await load())(program);
  } else if (chosen) {
    (await chosen.load())(program);
  } else {
    for (const command of topLevelCommands) program.command(command.name).description(command.summary);
  }
  return program;
}
