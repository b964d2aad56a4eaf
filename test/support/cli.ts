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
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", ...env } }, (error, stdout, stderr) => {
      const exitCode = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

const SCHEME_SIM = fileURLToPath(new URL("./scheme-sim.ts", import.meta.url));

/** Runs the scheme simulator (`npm run scheme-sim -- ...`, ./scheme-sim.ts) in a child process, as a person trying the gateway would. */
export function runSchemeSim(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", SCHEME_SIM, ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const exitCode = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/**
 * Runs a `clearline` command's function in this process (src/cli/run.ts, the same program the bin
 * runs), capturing what it writes: for tests of what a command does, where starting a Node process
 * per command is not under test and only costs seconds on a busy machine. Environment overrides
 * apply for the command's duration; one command at a time (the capture is process-wide).
 */
export async function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const { runClearline } = await import("../../src/cli/run.ts");
  const saved = new Map(Object.keys({ CLEARLINE_LOG_LEVEL: "", ...env }).map((name) => [name, process.env[name]]));
  Object.assign(process.env, { CLEARLINE_LOG_LEVEL: "warn", ...env });
  const printed = { stdout: "", stderr: "" };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (stream: "stdout" | "stderr") => ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    printed[stream] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
    const done = rest.find((argument) => typeof argument === "function") as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture("stdout");
  process.stderr.write = capture("stderr");
  try {
    const exitCode = await runClearline(["node", "clearline", ...args]);
    return { exitCode, ...printed };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    process.exitCode = undefined;
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
