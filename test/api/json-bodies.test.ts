import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registeredRoutes } from "../../src/api/route-list.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { serviceRoutes } from "../../src/api/service-routes.ts";
import { limits } from "../../src/config/limits.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant } from "../support/api-server.ts";
import { ledgerCounts } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn, type OpsClient } from "../support/ops-client.ts";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
// Uploads take a file's bytes whatever the content type (files.ts, reconciliations.ts,
// operations-files.ts): a file's reader judges them, with a finding and its position.
const FILE_UPLOADS = new Set(["POST /v1/files", "POST /v1/reconciliations/imports", "POST /v1/ops/files/preview", "POST /v1/ops/files"]);

/**
 * What a JSON body may not be, on every JSON route (issue 31): nested past the depth bound,
 * holding one member name twice in an object, or bytes that are not UTF-8. Each is refused with
 * 400 and its position before any route (or the text guard) reads the body.
 */
describe("the one strict JSON body parser in front of every route", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let baseUrl: string;
  let client: ApiClient;
  let tenantId: string;
  let operator: OpsClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    // Every route `clearline serve` has (src/service.ts uses the same list); the card route's
    // authorizer is never reached: each body here is refused before a handler runs.
    app = buildHttpServer({ pool: db.pool, logger: createLogger({ level: "silent" }), extraRoutes: serviceRoutes({ pool: db.pool, authorizer: undefined as never }) });
    await app.listen({ host: "127.0.0.1", port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const tenant = await givenTenant(db.pool, "json-bodies");
    tenantId = tenant.tenantId;
    client = new ApiClient(baseUrl, tenant.apiKey);
    for (const [id, kind] of [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]] as const) {
      expect((await client.post("/v1/accounts", { id, kind, currency: "USD" })).status).toBe(201);
    }
    operator = await signIn(baseUrl, "json-bodies", "ada", await givenOperator(db.pool, tenantId, "ada", "admin"));
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  /** POSTs raw bytes as application/json, with the API key, the operator's session and a fresh key. */
  async function sendRaw(method: string, path: string, body: Buffer | string) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      body,
      headers: {
        "content-type": "application/json", authorization: `Bearer ${client.apiKey}`, cookie: operator.cookie,
        "x-csrf-token": operator.csrfToken, "idempotency-key": randomUUID(),
      },
    });
    const text = await response.text();
    return { status: response.status, json: JSON.parse(text) };
  }
  const payment = (reference: string) => `{"client_reference":"${reference}","currency":"USD","debtor_account":"settlement","creditor_account":"alice"`;

  it("answers 400 request_body_too_deep, not 500, to a body nested 5,000 deep on every JSON route", async () => {
    const deep = `{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}`;
    const routes = registeredRoutes(app).filter((route) => MUTATING.has(route.method) && route.url.startsWith("/v1/") && !FILE_UPLOADS.has(`${route.method} ${route.url}`));
    expect(routes.length).toBeGreaterThanOrEqual(15);
    for (const route of routes) {
      const answer = await sendRaw(route.method, route.url.replace(/:([A-Za-z_]+)/g, "probe"), deep);
      expect({ route: `${route.method} ${route.url}`, status: answer.status, code: answer.json.code })
        .toEqual({ route: `${route.method} ${route.url}`, status: 400, code: "request_body_too_deep" });
    }
  });

  it(`answers 400 naming the byte where a body passes ${limits.http.jsonDepthMax} levels, and takes one at the bound`, async () => {
    const nested = (levels: number) => `${payment("deep-1")},"amount":"1.00","description":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    const over = await sendRaw("POST", "/v1/payments", nested(limits.http.jsonDepthMax + 1));
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: "request_body_too_deep", errors: [{ in: "body", offset: nested(1).length - 2 + limits.http.jsonDepthMax }] });
    expect(over.json.detail).toMatch(new RegExp(`deeper than ${limits.http.jsonDepthMax} levels`));
    // At the bound the body is read and judged by the route: a description is not an array.
    const at = await sendRaw("POST", "/v1/payments", nested(limits.http.jsonDepthMax));
    expect(at.status).toBe(400);
    expect(at.json.code).toBe("request_invalid");
  });

  it("refuses a payment whose amount member appears twice with 400 naming the member and both positions, posting nothing", async () => {
    const before = await ledgerCounts(db.pool, tenantId);
    const body = `${payment("dup-1")},"amount":"1.00","amount":"5000.00"}`;
    const answer = await sendRaw("POST", "/v1/payments", body);
    expect(answer.status).toBe(400);
    const second = body.lastIndexOf('"amount"');
    expect(answer.json).toMatchObject({ code: "request_body_key_duplicate", errors: [{ field: "amount", in: "body", offset: second, first_offset: body.indexOf('"amount"') }] });
    expect(answer.json.detail).toMatch(/amount/);
    expect(await ledgerCounts(db.pool, tenantId)).toEqual(before);
  });

  it("takes a member name spelled with an escape as the same member", async () => {
    const answer = await sendRaw("POST", "/v1/payments", `${payment("dup-2")},"amount":"1.00","\\u0061mount":"5000.00"}`);
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0]).toMatchObject({ field: "amount" });
  });

  it("names the path of a duplicate inside a nested object, and lets the same name live in two objects", async () => {
    const nested = await sendRaw("POST", "/v1/payments", `${payment("dup-3")},"amount":"1.00","x":[{"a":1},{"a":1,"a":2}]}`);
    expect(nested.json.errors[0]).toMatchObject({ code: "REQUEST_BODY_KEY_DUPLICATE", field: "x[1].a" });
    const apart = await sendRaw("POST", "/v1/payments", `${payment("dup-4")},"amount":"1.00","x":[{"a":1},{"a":1}]}`);
    expect(apart.json.code).toBe("request_invalid");   // the parser took it; the route refuses the unknown member
  });

  for (const [name, bytes, offset] of [["\\xff\\xfe", [0xff, 0xfe], 0], ["the overlong \\xc0\\x80", [0xc0, 0x80], 0], ["a truncated \\xe2\\x82", [0xe2, 0x82], 0]] as const) {
    it(`refuses a body holding ${name} with 400 naming the byte offset, storing nothing`, async () => {
      const before = await ledgerCounts(db.pool, tenantId);
      const head = Buffer.from(`${payment(`utf8-${offset}-${bytes.join("-")}`)},"amount":"1.00","description":"rent `);
      const body = Buffer.concat([head, Buffer.from(bytes), Buffer.from('"}')]);
      const answer = await sendRaw("POST", "/v1/payments", body);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ code: "request_body_utf8_invalid", errors: [{ in: "body", offset: head.length + offset }] });
      expect(answer.json.detail).toContain(`byte ${head.length + offset}`);
      expect(await ledgerCounts(db.pool, tenantId)).toEqual(before);
    });
  }

  it("still takes a body with multi-byte UTF-8 text and a leading byte order mark", async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${payment("utf8-ok")},"amount":"1.00","description":"café \u{1f600}"}`)]);
    const answer = await sendRaw("POST", "/v1/payments", body);
    expect(answer.status).toBe(201);
    expect(answer.json.description).toBe("café \u{1f600}");
  });

  it("still refuses a __proto__ member with 400, as fastify's parser did", async () => {
    const answer = await sendRaw("POST", "/v1/payments", `${payment("proto-1")},"amount":"1.00","__proto__":{"x":1}}`);
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0]).toMatchObject({ field: "__proto__", in: "body" });
  });
});
