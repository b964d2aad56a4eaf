import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `clearline` command in a child process, as an operator would. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const exitCode = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ exitCode, stdout, stderr });
    });
  });
}
