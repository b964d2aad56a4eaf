import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { clearlineBin } from "./cli-child.ts";

export interface ServeChild {
  baseUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A real `clearline serve` on a free port, against `databaseUrl`, with a home of its own; `bin`
 * names another release's command (bench/support/old-release.ts).
 */
export async function startServeChild(
  databaseUrl: string, env: Record<string, string> = {}, bin = clearlineBin,
): Promise<ServeChild & { home: string }> {
  const home = mkdtempSync(path.join(tmpdir(), "clearline-bench-serve-"));
  const child = spawn(process.execPath, [bin, "serve", "--http-port", "0"], {
    env: {
      ...process.env, CLEARLINE_LOG_LEVEL: "warn", CLEARLINE_HOME: home, DATABASE_URL: databaseUrl,
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) => {
      reject(new Error(`serve exited before serving (${String(code)}): ${seen}`));
    });
  });
  return {
    baseUrl,
    child,
    home,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}
