import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.ts";
import { describeFailure } from "../../src/cli/run.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

/** Leaf commands by their full name ("ledger stats"). */
function leaves(command: Command, prefix = ""): Array<[string, Command]> {
  if (command.commands.length === 0) return [[prefix.trim(), command]];
  return command.commands.flatMap((child) => leaves(child, `${prefix} ${child.name()}`));
}

// Commands that run rather than read: serve runs until stopped; review release only refuses, naming the decisions that replaced it.
const notReadCommands = new Set(["serve", "review release"]);

describe("clearline's manners", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("prints its version with --version and exits 0", async () => {
    const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
    const run = await runCli(["--version"]);
    expect(run).toMatchObject({ exitCode: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("offers --json on every command that reads or reports", async () => {
    const missing = leaves(await buildProgram({ all: true })).filter(([name, command]) => !notReadCommands.has(name) && !command.options.some((o) => o.long === "--json"));
    expect(missing.map(([name]) => name)).toEqual([]);
  });

  it("exits quietly, without a stack trace, when the reader of its output goes away (clearline ledger stats | head -1)", async () => {
    const child = spawn(process.execPath, [BIN, "ledger", "stats"], { env: { ...process.env, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] });
    // The reader is gone before the command writes its first line: every write meets a closed pipe.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => { stderr += chunk.toString(); });
    const exitCode = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    expect(stderr).toBe("");
    expect(exitCode).toBe(0);
  });

  it("describes every kind of failure in words, never as 'undefined'", () => {
    const described = [undefined, null, "", new Error(""), { code: "XX000" }, "a plain string", new Error("a message")].map(describeFailure);
    for (const text of described) {
      expect(text).not.toBe("undefined");
      expect(text.trim()).not.toBe("");
    }
    expect(described[5]).toBe("a plain string");
    expect(described[6]).toBe("a message");
    expect(described[4]).toContain("XX000");
  });

  it("prints a JSON array of decoded ISO 8583 messages with --json", async () => {
    const encoded = await runCli(["iso8583", "encode", "--json", JSON.stringify({ mti: "0800", fields: { 11: "000001", 70: "301" } })]);
    expect(encoded.exitCode).toBe(0);
    const { hex } = JSON.parse(encoded.stdout) as { hex: string };
    const decoded = await runCli(["iso8583", "decode", "--json", hex]);
    expect(JSON.parse(decoded.stdout)).toEqual([{ mti: "0800", fields: { 11: "000001", 70: "301" } }]);
  });
});
