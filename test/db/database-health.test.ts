import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { isProcessAlive, livePostmaster, ownerOf } from "../../src/db/embedded-postmaster.ts";
import { testPan } from "../gateway/support.ts";
import { runSchemeSim } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { createOwnPostgres, type OwnPostgres } from "../support/own-postgres.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";

interface LogLine { level: number; msg: string; attempts?: number; time: number; lease?: string; job?: string }

/** serve's structured log lines (stderr), kept as they come. */
function logLines(serve: ServeProcess): LogLine[] {
  const lines: LogLine[] = [];
  let partial = "";
  serve.child.stderr?.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const complete = text.split("\n");
    partial = complete.pop() ?? "";
    for (const line of complete) {
      if (line.startsWith("{")) lines.push(JSON.parse(line) as LogLine);
    }
  });
  return lines;
}

async function readiness(baseUrl: string): Promise<{ status: number; database?: { ok: boolean; reason?: string } }> {
  try {
    const response = await fetch(`${baseUrl}/readyz`);
    const body = await response.json() as { checks: { database?: { ok: boolean; reason?: string } } };
    return { status: response.status, ...(body.checks.database ? { database: body.checks.database } : {}) };
  } catch {
    return { status: 0 };
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function holdPort(port: number): Promise<Server> {
  for (;;) {
    // Whatever connects (the service's pool, trying) is hung up on at once.
    const server = createServer((socket) => socket.destroy());
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (bound) return server;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("serve without its database", () => {
  const homes: string[] = [];
  const started: ServeProcess[] = [];
  let own: OwnPostgres | undefined;
  const newHome = () => {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-dblost-"));
    homes.push(home);
    return home;
  };
  afterAll(async () => {
    for (const serve of started) await serve.stop();
    for (const home of homes) {
      const left = livePostmaster(path.join(home, "pgdata"));
      if (left) process.kill(left.pid, "SIGKILL");
      rmSync(home, { recursive: true, force: true });
    }
    await own?.destroy();
  });

  it("starts its embedded PostgreSQL again after a kill -9 of the postmaster, and is ready without a person", async () => {
    const home = newHome();
    const serve = await startServeProcess({ DATABASE_URL: "", CLEARLINE_HOME: home, CLEARLINE_LOG_LEVEL: "info" });
    started.push(serve);
    const lines = logLines(serve);
    await eventually(async () => (await readiness(serve.baseUrl)).status === 200);
    const apiKey = readFileSync(path.join(home, "default-tenant-api-key"), "utf8").trim();
    const lookup = () => fetch(`${serve.baseUrl}/v1/payments?client_reference=nothing-here`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect((await lookup()).status).toBe(404);

    const killed = livePostmaster(path.join(home, "pgdata"));
    expect(killed).toBeDefined();
    const killedAt = Date.now();
    process.kill(killed!.pid, "SIGKILL");
    // Not ready, saying why, while the server is gone; requests meanwhile are a retryable 503.
    let reason = "";
    await eventually(async () => {
      const ready = await readiness(serve.baseUrl);
      reason = ready.database?.reason ?? "";
      return ready.status === 503 && /embedded PostgreSQL died/.test(reason);
    });
    expect(reason).toMatch(/restart attempt \d of 5/);
    await eventually(async () => (await readiness(serve.baseUrl)).status === 200);
    const readyAfterMs = Date.now() - killedAt;

    const restarted = livePostmaster(path.join(home, "pgdata"));
    expect(restarted?.pid).not.toBe(killed!.pid);
    expect(restarted?.port).toBe(killed!.port);
    expect(ownerOf(home)).toBe(serve.child.pid);
    expect((await lookup()).status).toBe(404);
    expect(serve.child.exitCode).toBeNull();
    expect(lines.some((line) => /the embedded PostgreSQL runs again \(attempt \d of 5/.test(line.msg))).toBe(true);
    process.stdout.write(`embedded postmaster killed: ready again after ${readyAfterMs} ms\n`);

    // And it still stops in order, its server with it.
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    await eventually(() => !isProcessAlive(restarted!.pid));
  });

  it("exits non-zero within its bound, naming why, when the embedded PostgreSQL will not start again", async () => {
    const home = newHome();
    const serve = await startServeProcess({ DATABASE_URL: "", CLEARLINE_HOME: home });
    started.push(serve);
    let stderr = "";
    serve.child.stderr?.on("data", (chunk: Buffer) => { stderr += chunk.toString(); });
    await eventually(async () => (await readiness(serve.baseUrl)).status === 200);
    const killed = livePostmaster(path.join(home, "pgdata"))!;
    const killedAt = Date.now();
    process.kill(killed.pid, "SIGKILL");
    // Someone else takes the server's port: no restart can listen there.
    const squatter = await holdPort(killed.port);
    try {
      const code = await serve.exited;
      const exitedAfterMs = Date.now() - killedAt;
      expect(code).toBe(1);
      expect(stderr).toMatch(/DB_EMBEDDED_RESTART_FAILED: the embedded PostgreSQL died and did not start again in 5 attempts/);
      expect(stderr).toMatch(/Address already in use|could not create any TCP\/IP sockets/);
      const { embeddedRestartAttemptsMax: attempts, embeddedRestartTimeoutMs: startMs, embeddedRestartBackoffCapMs: capMs } = limits.availability;
      const boundMs = limits.availability.databaseProbeIntervalMs + attempts * (capMs + startMs) + 10_000;
      expect(exitedAfterMs).toBeLessThan(boundMs);
      process.stdout.write(`embedded postmaster that cannot restart: serve exited 1 after ${exitedAfterMs} ms (bound ${boundMs} ms)\n`);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it("with an external database stopped and started: 503 and 96 meanwhile, not ready with the reason, /livez fails past its bound, recovers by itself, logs counted", async () => {
    own = await createOwnPostgres();
    const livenessBoundMs = 3_000;
    const iso8583Port = await freePort();
    const serve = await startServeProcess({
      DATABASE_URL: own.url, CLEARLINE_HOME: newHome(), CLEARLINE_LOG_LEVEL: "info",
      CLEARLINE_LIVENESS_WITHOUT_DATABASE_MS: String(livenessBoundMs), CLEARLINE_ISO8583_PORT: String(iso8583Port),
    });
    started.push(serve);
    const lines = logLines(serve);
    await eventually(async () => (await readiness(serve.baseUrl)).status === 200);

    const stoppedAt = Date.now();
    await own.stopImmediately();
    let reason = "";
    await eventually(async () => {
      const ready = await readiness(serve.baseUrl);
      reason = ready.database?.reason ?? "";
      return ready.status === 503 && /^database unreachable .*ECONNREFUSED/.test(reason);
    });
    expect(reason).toMatch(/database unreachable for [\d.]+ s \(\d+ failed probes\): ECONNREFUSED; retrying with backoff/);

    // HTTP: a retryable 503 with Retry-After and the catalog's code.
    const refused = await fetch(`${serve.baseUrl}/v1/payments?client_reference=any`, { headers: { authorization: "Bearer whatever" } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe(String(limits.availability.unavailableRetryAfterSeconds));
    expect(await refused.json()).toMatchObject({ code: "service_unavailable" });
    // ISO 8583: the scheme is answered 96 (system malfunction), nothing stored.
    const card = await runSchemeSim(["send", "--port", String(iso8583Port), "--pan", testPan("455600", 12), "--amount", "2500", "--sign-on", "--stan", "700", "--currency", "978"]);
    const answers = card.stdout.trim().split("\n").map((line) => JSON.parse(line) as { direction: string; mti: string; fields: Record<string, string> })
      .filter((message) => message.direction === "received").map((message) => `${message.mti}/${message.fields["39"]}`);
    expect(answers).toContain("0110/96");

    // Liveness holds for its bound, then fails so that a supervisor restarts the process.
    await eventually(async () => (await fetch(`${serve.baseUrl}/livez`)).status === 503);
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(livenessBoundMs);
    const livez = await (await fetch(`${serve.baseUrl}/livez`)).json() as { reason: string };
    expect(livez.reason).toMatch(/no database for [\d.]+ s \(bound 3\.0 s\): ECONNREFUSED/);

    // An outage longer than one log interval: the loops report counts, not each attempt.
    await eventually(() => lines.some((line) => /^database unreachable, \d+ attempts in the last 10 s: ECONNREFUSED$/.test(line.msg)));
    await own.start();
    const restartedAt = Date.now();
    await eventually(async () => (await readiness(serve.baseUrl)).status === 200);
    const readyAfterMs = Date.now() - restartedAt;
    expect((await fetch(`${serve.baseUrl}/livez`)).status).toBe(200);
    expect(lines.some((line) => /^database reachable again after \d+ failed attempts in [\d.]+ s$/.test(line.msg))).toBe(true);

    const outageMs = restartedAt - stoppedAt;
    const during = lines.filter((line) => line.level >= 40 && line.time >= stoppedAt && line.time <= Date.now());
    // Per kind of failure (the text before its count or reason): the first line, one per interval, the last.
    const kinds = new Map<string, number>();
    for (const line of during) {
      // A lease lost is one line per lease (and job), not per attempt.
      const kind = line.msg.replace(/(, \d+ attempts in the last .*|: [^:]*)$/, "") + (line.lease ?? line.job ? ` [${line.lease ?? line.job}]` : "");
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const perKindMax = Math.ceil(outageMs / limits.availability.failureLogIntervalMs) + 2;
    for (const [kind, count] of kinds) expect(count, kind).toBeLessThanOrEqual(perKindMax);
    const attempts = during.reduce((sum, line) => sum + (line.attempts ?? 1), 0);
    expect(attempts).toBeGreaterThan(during.length * 2);
    process.stdout.write(`external database down ${outageMs} ms: ${during.length} warning lines for ${attempts} failed attempts`
      + ` (${[...kinds].map(([kind, count]) => `${count} ${kind}`).join("; ")}); ready ${readyAfterMs} ms after it was back\n`);
  });
});
