import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";
import { firstUnmatched, idPrefixes, readmeBlocks, type ReadmeStep } from "./readme-examples.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = path.join(ROOT, "src/cli/clearline.mjs");
const blocks = readmeBlocks(path.join(ROOT, "README.md"));

/**
 * Every shell example of the README, run as written, in order, against one fresh home and
 * database with the service running beside them (README.md's conventions are described in
 * ./readme-examples.ts). The only rewriting: the service's real ports for 8080 and 8583, and
 * `npx clearline` for the compiled CLI of this checkout.
 */
describe("the README's examples", () => {
  let db: TestDatabase;
  let home: string;
  let service: ChildProcess;
  let serviceOutput = "";
  let ports = { http: "", iso8583: "" };
  const variables: Record<string, string> = {};
  const lastIds = new Map<string, string>();

  beforeAll(async () => {
    db = await createEmptyDatabase();
    home = mkdtempSync(path.join(tmpdir(), "clearline-readme-"));
    service = spawn(process.execPath, [BIN, "serve", "--http-port", "0", "--iso8583-port", "0"], {
      cwd: ROOT, env: { ...process.env, CLEARLINE_HOME: home, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "warn" }, stdio: ["ignore", "ignore", "pipe"],
    });
    ports = await new Promise((resolve, reject) => {
      service.stderr?.on("data", (chunk: Buffer) => {
        serviceOutput += chunk.toString();
        const http = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(serviceOutput)?.[1];
        const iso8583 = /scheme endpoint on port (\d+)/.exec(serviceOutput)?.[1];
        if (http && iso8583) resolve({ http, iso8583 });
      });
      service.once("exit", (code) => reject(new Error(`serve exited (${code}) before serving: ${serviceOutput}`)));
    });
  });

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service.once("exit", resolve));
      service.kill("SIGTERM");
      await exited;
    }
    await db?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  function rewrite(command: string): string {
    let result = command
      .replaceAll("localhost:8080", `127.0.0.1:${ports.http}`)
      .replaceAll("--port 8583", `--port ${ports.iso8583}`)
      .replace(/^npx clearline /, `node ${BIN} `);
    for (const prefix of idPrefixes) {
      result = result.replaceAll(`${prefix}_...`, () => {
        const id = lastIds.get(prefix);
        if (!id) throw new Error(`${command}: no ${prefix}_ id was printed before`);
        return id;
      });
    }
    return result;
  }

  function run(command: string): Promise<{ code: number; printed: string }> {
    return new Promise((resolve) => {
      execFile("bash", ["-c", command], {
        cwd: ROOT, env: { ...process.env, ...variables, CLEARLINE_HOME: home, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "warn" },
      }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, printed: `${stdout}${stderr}` }));
    });
  }

  function rememberIds(printed: string): void {
    for (const prefix of idPrefixes) {
      const first = new RegExp(`\\b${prefix}_[A-Za-z0-9_-]+`).exec(printed)?.[0];
      if (first) lastIds.set(prefix, first);
    }
  }

  async function runStep(step: ReadmeStep): Promise<void> {
    if (/^(npx clearline serve|npm start)\b/.test(step.command)) return;   // the service started above
    const assignment = /^([A-Z_]+)=(\S+)$/.exec(step.command);
    if (assignment?.[1] && assignment[2]) {
      variables[assignment[1]] = rewrite(assignment[2]);
      return;
    }
    const { code, printed } = await run(rewrite(step.command));
    const where = `README.md line ${step.line}: ${step.command}\n${printed}`;
    // README_EXAMPLES_ECHO=1 prints what each example printed: for writing the README's lines.
    if (process.env.README_EXAMPLES_ECHO === "1") process.stdout.write(`\n$ ${step.command}\n${printed}`);
    expect(code, where).toBe(0);
    expect(firstUnmatched(step.expected, printed.split("\n")), where).toBeUndefined();
    rememberIds(printed);
  }

  it("has examples to run, and says why any block is left out", () => {
    expect(blocks.filter((b) => b.kind === "commands").length).toBeGreaterThanOrEqual(6);
    for (const block of blocks) if (block.kind === "skipped") expect(block.reason, `README.md line ${block.line}`).not.toBe("");
  });

  it("prints on start what the quickstart says it prints", () => {
    for (const block of blocks) {
      if (block.kind !== "serve-output") continue;
      const expected = block.expected.map((line) => line.replaceAll("/path/to/.clearline", home).replaceAll("127.0.0.1:8080", `127.0.0.1:${ports.http}`));
      expect(firstUnmatched(expected, serviceOutput.split("\n")), `README.md line ${block.line}\n${serviceOutput}`).toBeUndefined();
    }
  });

  it("runs every shell example in order, each printing what the README shows", async () => {
    for (const block of blocks) {
      if (block.kind !== "commands") continue;
      for (const step of block.steps) await runStep(step);
    }
  }, 300_000);
});
