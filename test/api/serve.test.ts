import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

describe("clearline serve", () => {
  let db: TestDatabase;
  let child: ChildProcess;
  let baseUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    child = spawn(process.execPath, [BIN, "serve", "--http-port", "0"], {
      env: { ...process.env, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "warn", CLEARLINE_HOME: "/tmp/clearline-serve-test" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    baseUrl = await new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /serving on (http:\/\/\S+)/.exec(seen);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`serve exited early with ${code}: ${seen}`)));
    });
  });
  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await db.drop();
  });

  it("answers /healthz when its database answers", async () => {
    const response = await fetch(`${baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it("serves Prometheus metrics including the ledger's unique-index-hit counter at zero", async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    expect(text).toMatch(/^clearline_ledger_entry_unique_index_hits_total 0$/m);
  });

  it("stops cleanly on SIGINT with exit code 0", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });
});
