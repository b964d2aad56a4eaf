import { assertLimitsValid } from "../config/limits.ts";
import { exitCodes } from "./exit-codes.ts";
import { watchStdout } from "./output.ts";
import { describeFailure, runClearline } from "./run.ts";

// Every bound is checked once at start: a zero or negative bound is a build mistake, not input.
assertLimitsValid();

// `clearline ledger stats | head -1`: a reader that went away ends our output quietly.
watchStdout(process.stdout);

// A failure outside a command's own await (a background job) still gets its one line.
process.on("unhandledRejection", (reason) => {
  process.stderr.write(`clearline: ${describeFailure(reason)}\n`);
  process.exitCode = exitCodes.failure;
});

process.exitCode = await runClearline(process.argv);
