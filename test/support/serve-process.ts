import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

export interface ServeProcess {
  baseUrl: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Everything the process wrote to stderr so far (its JSON log lines). */
  stderr(): string;
  stop(): Promise<void>;
}

/** A real `clearline serve` process on a free port, against the given database. */
export async function startServeProcess(env: Record<string, string>): Promise<ServeProcess> {
  // Its own home (drop folder, key files), never the repository's ./.clearline.
  const home = mkdtempSync(path.join(tmpdir(), "clearline-serve-"));
  const child = spawn(process.execPath, [BIN, "serve", "--http-port", "0"], {
    env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", CLEARLINE_HOME: home, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code, signal) => resolve(signal ? null : code)));
  let seen = "";
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`serve exited before serving (${code}): ${seen}`)));
  });
  return {
    baseUrl,
    child,
    exited,
    stderr: () => seen,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}
