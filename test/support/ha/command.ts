import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

export interface HaCommandResult {
  stdout: string;
  stderr: string;
  // The answer of the command: its last line on stdout (up's URL).
  lastLine: string;
}

/**
 * Runs the tool as people and CI run it (`npm run ha -- ...`), without npm in between. A failure
 * rejects with the command's own message and what it printed.
 */
export async function runHa(args: string[]): Promise<HaCommandResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", MAIN, ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`npm run ha -- ${args.join(" ")} failed (${error.code}):\n${stderr}`));
          return;
        }
        const lastLine = stdout.trimEnd().split("\n").at(-1) ?? "";
        resolve({ stdout, stderr, lastLine });
      },
    );
  });
}
