import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The installed command: run as an executable, so its shebang's Node flags apply as they do for an operator. */
export const clearlineBin = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

export interface CliChildRun {
  seconds: number;
  peakRssMb: number;   // the kernel's high-water mark of the child's resident set (VmHWM)
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/** The compiled command is what `clearline` runs; build it as `npm install` would. */
export function buildCli(): void {
  const built = spawnSync("npm", ["run", "-s", "build"], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
}

function highWaterMarkKb(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;   // the child has exited: its last reading stands
  }
}

/**
 * Runs `clearline ARGS` in a child process and reads its peak RSS from /proc while it runs
 * (VmHWM only grows, so the last reading before exit is the peak, less whatever the last
 * `pollMs` added); wall time from spawn to exit, start-up included.
 */
export function runCliChild(args: string[], env: Record<string, string>, pollMs = 50): Promise<CliChildRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(clearlineBin, args, { env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", ...env } });
    let stdout = "";
    let stderr = "";
    let peakKb = 0;
    child.stdout.setEncoding("utf8").on("data", (text: string) => { stdout += text; });
    child.stderr.setEncoding("utf8").on("data", (text: string) => { stderr += text; });
    const poll = setInterval(() => {
      const kb = child.pid === undefined ? undefined : highWaterMarkKb(child.pid);
      if (kb !== undefined) peakKb = Math.max(peakKb, kb);
    }, pollMs);
    child.on("error", (error) => { clearInterval(poll); reject(error); });
    child.on("exit", (exitCode) => {
      clearInterval(poll);
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, peakRssMb: peakKb / 1024, stdout, stderr, exitCode });
    });
  });
}
