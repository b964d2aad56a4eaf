import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { printedMatches, readmeShellBlocks, type ReadmeCommand } from "./readme-examples.ts";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const cli = path.join(repo, "src/cli/clearline.mjs");
const blocks = readmeShellBlocks(readFileSync(path.join(repo, "README.md"), "utf8"));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

interface Service {
  child: ChildProcess;
  closed: Promise<void>;
  printed: () => string;
}

/**
 * `npm start` in the background, in its own process group so a Ctrl-C (SIGINT) reaches all of it.
 * Without its prestart build: the global setup built dist/cli from these sources, and a rebuild
 * would rewrite the files under the other test files that run the CLI at the same time.
 */
async function npmStart(env: NodeJS.ProcessEnv, httpPort: number): Promise<Service> {
  const child = spawn("npm", ["start", "--ignore-scripts"], { cwd: repo, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let printed = "";
  const closed = new Promise<void>((resolve) => child.stderr.once("close", () => resolve()));
  const serving = new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes(`clearline serving on http://127.0.0.1:${httpPort}`)) resolve();
    });
    child.stdout.resume();
    child.once("exit", (code) => reject(new Error(`npm start exited (${code}) before serving:\n${printed}`)));
  });
  await serving;
  // Serving is not ready: /readyz answers 200 once every check passes (each poll waits for its answer).
  while ((await fetch(`http://127.0.0.1:${httpPort}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  return { child, closed, printed: () => printed };
}

/**
 * The commands as the reader types them, with two substitutions: `npx clearline` runs the compiled
 * CLI directly (the same bin; npx's own start-up is not under test), and the README's ports become
 * free ones (other runs share this machine).
 */
function shellScript(commands: ReadmeCommand[], ports: { http: number; iso8583: number }): string {
  return commands
    .map((entry, index) => {
      const command = entry.command
        .replaceAll("npx clearline", `node ${JSON.stringify(cli)}`)
        .replaceAll("localhost:8080", `localhost:${ports.http}`)
        .replaceAll("--port 8583", `--port ${ports.iso8583}`);
      return `{\n${command}\n} 2>&1\nprintf '@@readme %d %d\\n' ${index} $?`;
    })
    .join("\n");
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd: repo, env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("close", () => resolve(out));
  });
}

/** What each command printed and its exit code, split at the markers the script prints. */
function splitPrinted(out: string): Map<number, { printed: string[]; exitCode: number }> {
  const results = new Map<number, { printed: string[]; exitCode: number }>();
  let current: string[] = [];
  for (const line of out.split("\n")) {
    const marker = /^(.*)@@readme (\d+) (\d+)$/.exec(line);
    if (!marker) {
      current.push(line);
      continue;
    }
    if (marker[1]) current.push(marker[1]);
    results.set(Number(marker[2]), { printed: current, exitCode: Number(marker[3]) });
    current = [];
  }
  return results;
}

describe("README examples", () => {
  let home: string;
  let database: TestDatabase | undefined;
  let service: Service | undefined;
  let env: NodeJS.ProcessEnv;
  const ports = { http: 0, iso8583: 0 };

  beforeAll(async () => {
    home = mkdtempSync(path.join(tmpdir(), "clearline-readme-"));
    ports.http = await freePort();
    ports.iso8583 = await freePort();
    env = { ...process.env, CLEARLINE_HOME: home, CLEARLINE_HTTP_PORT: String(ports.http), CLEARLINE_ISO8583_PORT: String(ports.iso8583), CLEARLINE_LOG_LEVEL: "warn" };
    // The machine's PostgreSQL when the run uses one (a fresh migrated clone), else the embedded
    // one in the fresh home, as on a reader's machine.
    if (process.env.DATABASE_URL) {
      database = await createTestDatabase({ poolMax: 2 });
      env.DATABASE_URL = database.url;
    } else {
      delete env.DATABASE_URL;
    }
    service = await npmStart(env, ports.http);
  });

  afterAll(async () => {
    if (service?.child.pid !== undefined && service.child.exitCode === null) process.kill(-service.child.pid, "SIGINT");
    await service?.closed;
    await database?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it("npm start prints where the tenant's key and the drop folder are, and the address it serves", () => {
    expect(service?.printed()).toContain(`clearline created tenant "default"; its API key is in ${path.join(home, "default-tenant-api-key")}`);
    expect(service?.printed()).toContain(`clearline drop folder: ${path.join(home, "drop")} (tenant default, partner default)`);
  });

  it("every shell example runs in order against a fresh home and prints what the README shows", async () => {
    const commands = blocks.flatMap((block) => block.commands);
    expect(commands.length).toBeGreaterThan(10);
    const results = splitPrinted(await runBash(shellScript(commands, ports), env));
    const differences = commands.flatMap((entry, index) => {
      const result = results.get(index);
      if (result && result.exitCode === 0 && printedMatches(entry.expected, result.printed.filter((line, at, all) => line !== "" || at < all.length - 1))) return [];
      return [`README line ${entry.line}: $ ${entry.command}\n  exit ${result?.exitCode ?? "none"}\n  README:\n    ${entry.expected.join("\n    ")}\n  printed:\n    ${(result?.printed ?? []).join("\n    ")}`];
    });
    expect(differences.join("\n\n")).toBe("");
  }, 300_000);

  it("the examples not run are marked illustrative: installing, and a reconciliation that needs the reader's bank statement", () => {
    expect(blocks.filter((block) => block.illustrative).map((block) => block.section)).toEqual([
      "On a fresh machine",
      "Reconciliation: their side against ours, a reason for every difference",
    ]);
  });
});

describe("README example comparison", () => {
  it("a printed line that differs from the README's fails, ids and elided lines aside", () => {
    expect(printedMatches(["ok: file fil_...", "..."], ["ok: file fil_123", "more", "lines"])).toBe(true);
    expect(printedMatches(["ok: file fil_...", "..."], ["failed: file fil_123"])).toBe(false);
    expect(printedMatches(["one", "two"], ["one"])).toBe(false);
  });
});
