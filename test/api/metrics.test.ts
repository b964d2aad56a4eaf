import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { largestBodyBytes } from "../../src/api/oversize-body.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

/** Sends a raw HTTP/1.1 request head and `bodyBytes` of body, reads until the server closes or answers in full. */
function rawPost(baseUrl: string, headers: Record<string, string | number>, bodyBytes: number): Promise<{ written: number; response: string; error?: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let response = "";
    let written = 0;
    let error: string | undefined;
    socket.on("data", (data) => {
      response += data.toString("latin1");
      const [head, body = ""] = response.split("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(head ?? "");
      if (length && body.length >= Number(length[1])) socket.end();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => { error = e.code ?? e.message; });
    socket.on("close", () => resolve(error === undefined ? { written, response } : { written, response, error }));
    socket.on("connect", () => {
      const head = `POST /v1/payments HTTP/1.1\r\nhost: test\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
      socket.write(head);
      if (bodyBytes === 0) return;
      const chunk = Buffer.alloc(16_384, 0x20);
      const pump = () => {
        while (written < bodyBytes) {
          const size = Math.min(chunk.length, bodyBytes - written);
          written += size;
          if (!socket.write(chunk.subarray(0, size))) return void socket.once("drain", pump);
        }
      };
      pump();
    });
  });
}

describe("HTTP metrics and the body bound", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "metrics");
    await fund(world.client, "alice", "10.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  const metricsText = async () => (await world.client.get("/metrics")).text;

  it("observes request latency by route template and status class, never by raw URL", async () => {
    await world.client.post("/v1/payments", paymentRequest("m-1", "1.00"), { "idempotency-key": randomUUID() });
    await world.client.get("/v1/payments/pay_doesnotexist");
    await world.client.get("/no/such/route");
    const text = await metricsText();
    expect(text).toMatch(/clearline_http_request_duration_seconds_count\{method="POST",route="\/v1\/payments",status_class="2xx"\} [1-9]/);
    expect(text).toMatch(/clearline_http_request_duration_seconds_count\{method="GET",route="\/v1\/payments\/:id",status_class="4xx"\} [1-9]/);
    expect(text).toMatch(/clearline_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="unmatched",status_class="4xx"\}/);
    expect(text).not.toContain("pay_doesnotexist");
  });

  it("names process metrics clearline_process_* and clearline_nodejs_*, without a doubled prefix", async () => {
    const text = await metricsText();
    expect(text).toContain("clearline_process_cpu_user_seconds_total");
    expect(text).toContain("clearline_nodejs_heap_size_total_bytes");
    expect(text).not.toContain("clearline_process_process_");
    expect(text).not.toContain("clearline_process_nodejs_");
  });

  it(`answers 413 to a body of ${limits.http.bodyBytesMax + limits.http.oversizeBodyDrainBytesMax} bytes (bound plus drain) after reading it to the end, so a client still sending gets the answer, not a reset`, async () => {
    const bodyBytes = limits.http.bodyBytesMax + limits.http.oversizeBodyDrainBytesMax;
    const result = await rawPost(world.api.baseUrl, { authorization: `Bearer ${world.apiKey}`, "content-type": "application/json", "content-length": bodyBytes }, bodyBytes);
    expect(result.error).toBeUndefined();
    expect(result.written).toBe(bodyBytes);
    expect(result.response).toMatch(/^HTTP\/1.1 413 /);
    expect(result.response).toContain('"code":"request_too_large"');
  });

  it("answers 413 at once to Expect: 100-continue with a declared length no route accepts, before any body byte", async () => {
    const result = await rawPost(world.api.baseUrl, { authorization: `Bearer ${world.apiKey}`, "content-type": "application/json", "content-length": largestBodyBytes() + 1, expect: "100-continue" }, 0);
    expect(result.response).toMatch(/^HTTP\/1.1 413 /);
    expect(result.response).not.toContain("100 Continue");
    expect(result.response).toContain('"code":"request_too_large"');
  });

  it(`closes instead of reading more than ${limits.http.oversizeBodyDrainBytesMax} bytes past the bound, still answering 413 first`, async () => {
    const declared = limits.http.bodyBytesMax + limits.http.oversizeBodyDrainBytesMax + 1;
    const result = await rawPost(world.api.baseUrl, { authorization: `Bearer ${world.apiKey}`, "content-type": "application/json", "content-length": declared }, limits.http.bodyBytesMax + 1);
    expect(result.response).toMatch(/^HTTP\/1.1 413 /);
    expect(result.response).toMatch(/connection: close/i);
  });
});
