import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Request-Id (issue 33 item 7): on every answer, the caller's when it is well-formed and within
 * limits.http.requestIdCharsMax, else generated; and on every log line written for the request,
 * the adapter's and a service's alike.
 */
describe("Request-Id", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let baseUrl: string;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    const destination = new Writable({
      write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); },
    });
    const logger = createLogger({ level: "info", destination });
    // A route that logs as an adapter and as a service would, before and after a query and its body.
    const probe = (routes: FastifyInstance) => routes.post("/probe/log", async (request) => {
      const { marker } = request.body as { marker: string };
      request.log.warn({ marker }, "adapter line");
      await db.pool.query("SELECT pg_sleep(0.05)");
      logger.child({ component: "service" }).info({ marker }, "service line");
      return { ok: true };
    });
    app = buildHttpServer({ pool: db.pool, logger, extraRoutes: [probe] });
    await app.listen({ host: "127.0.0.1", port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  const idOf = async (path: string, requestId?: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      headers: requestId === undefined ? {} : { "request-id": requestId },
    });
    return { status: response.status, id: response.headers.get("request-id") };
  };

  it("answers with the caller's Request-Id, on a success, a 401 and a 404 alike", async () => {
    expect(await idOf("/healthz", "abc-123")).toEqual({ status: 200, id: "abc-123" });
    expect(await idOf("/v1/payments/pay_1", "req.401:x")).toEqual({ status: 401, id: "req.401:x" });
    expect(await idOf("/nowhere", "req_404")).toEqual({ status: 404, id: "req_404" });
  });

  it("generates one when the request has none, a new one each time", async () => {
    const first = await idOf("/healthz");
    const second = await idOf("/healthz");
    expect(first.id).toMatch(UUID);
    expect(second.id).toMatch(UUID);
    expect(second.id).not.toBe(first.id);
  });

  it("replaces a malformed or overlong Request-Id, and keeps one at its bound", async () => {
    const atBound = "a".repeat(limits.http.requestIdCharsMax);
    expect((await idOf("/healthz", atBound)).id).toBe(atBound);
    expect((await idOf("/healthz", `${atBound}a`)).id).toMatch(UUID);
    expect((await idOf("/healthz", "two words")).id).toMatch(UUID);
    expect((await idOf("/healthz", "quote\"d")).id).toMatch(UUID);
  });

  it("names the request on every log line written for it, with requests in flight together", async () => {
    const send = (requestId: string) => fetch(`${baseUrl}/probe/log`, {
      method: "POST", headers: { "content-type": "application/json", "request-id": requestId },
      body: JSON.stringify({ marker: requestId }),
    });
    const answers = await Promise.all(["one", "two", "three"].map((id) => send(`probe-${id}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const written = lines.filter((line) => typeof line.marker === "string");
    expect(written).toHaveLength(6);
    for (const line of written) expect(line.request_id).toBe(line.marker);
  });

  it("keeps naming the request when its body arrives after its headers", async () => {
    const body = JSON.stringify({ marker: "probe-slow-body" });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const sent = httpRequest(`${baseUrl}/probe/log`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": body.length, "request-id": "probe-slow-body" },
      }, (response) => { response.resume(); response.on("end", () => resolve(response.statusCode)); });
      sent.on("error", reject);
      sent.flushHeaders();
      // The second half is written once the server has answered the first with nothing: the body's
      // stream events then run apart from the request's arrival.
      sent.write(body.slice(0, 5));
      setImmediate(() => sent.end(body.slice(5)));
    });
    expect(status).toBe(200);
    const written = lines.filter((line) => line.marker === "probe-slow-body");
    expect(written.map((line) => line.request_id)).toEqual(["probe-slow-body", "probe-slow-body"]);
  });
});
