import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
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

describe("clearline serve when a listener cannot open", () => {
  let db: TestDatabase;
  let squatter: Server;
  let home: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    home = mkdtempSync(path.join(tmpdir(), "clearline-serve-listener-"));
    // Another process holds the HTTP port.
    squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => squatter.close(resolve));
    rmSync(home, { recursive: true, force: true });
    await db.drop();
  });

  /** A port free a moment ago: nothing here listens on it. */
  async function freePort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return port;
  }

  it("exits 1 naming the HTTP listener when its port is taken, having closed the ISO 8583 port it opened (regression: it kept running half-alive)", async () => {
    const httpPort = (squatter.address() as AddressInfo).port;
    const iso8583Port = await freePort();
    const child = spawn(process.execPath, [BIN, "serve", "--http-port", String(httpPort), "--iso8583-port", String(iso8583Port)], {
      env: { ...process.env, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "fatal", CLEARLINE_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      // The one-line failure is the event: by then serve has closed what it opened.
      const failure = await new Promise<string>((resolve, reject) => {
        let seen = "";
        child.stderr?.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          const line = /^clearline: .*$/m.exec(seen);
          if (line) resolve(line[0]);
        });
        void exited.then((code) => reject(new Error(`serve exited (${code}) without a failure line: ${seen}`)));
      });
      expect(failure).toMatch(new RegExp(`HTTP listener .*${httpPort}.*EADDRINUSE`));
      const iso8583 = await new Promise<string>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port: iso8583Port });
        socket.once("connect", () => { socket.destroy(); resolve("open"); });
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
      expect(iso8583).toBe("ECONNREFUSED");
      expect(await exited).toBe(1);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("exits 1 naming the ISO 8583 scheme endpoint when its port is taken", async () => {
    const iso8583Port = (squatter.address() as AddressInfo).port;
    const child = spawn(process.execPath, [BIN, "serve", "--http-port", "0", "--iso8583-port", String(iso8583Port)], {
      env: { ...process.env, DATABASE_URL: db.url, CLEARLINE_LOG_LEVEL: "fatal", CLEARLINE_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let seen = "";
    child.stderr?.on("data", (chunk: Buffer) => { seen += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(seen).toMatch(new RegExp(`^clearline: the ISO 8583 scheme endpoint .*${iso8583Port}.*EADDRINUSE`, "m"));
    expect(seen).not.toMatch(/serving on/);
  });
});
