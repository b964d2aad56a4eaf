import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FastifyInstance } from "fastify";
import { referencePagePath } from "../../src/api/reference-page.ts";
import { registeredRoutes } from "../../src/api/route-list.ts";
import { jsonSchemaOf, zodSchemaBehind } from "../../src/api/route-schema.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { serviceRoutes } from "../../src/api/service-routes.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { givenTenant } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";

type Operation = { security?: Array<Record<string, unknown>>; parameters?: Array<{ name: string; in: string }>; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, { content?: Record<string, unknown> }> };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, "{$1}");

/**
 * Mutating routes that take no Idempotency-Key, and why: each is idempotent by its own nature or
 * changes nothing (docs/decisions/0031, accounts.ts, payment-requests.ts). The reconciliation
 * routes take one since issue 33 item 6.
 */
const WITHOUT_IDEMPOTENCY_KEY = new Set([
  "POST /v1/accounts",                                   // idempotent on the account id
  "POST /v1/payment-requests",                           // keyed by the sender's Message-Id
  "POST /v1/ops/session",                                // signing in moves nothing
  "DELETE /v1/ops/session",
  "POST /v1/ops/files/preview",                          // a dry run: stores nothing
]);

describe("the OpenAPI document generated from the route schemas", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let doc: Document;
  let apiKey: string;
  let session: { cookie: string; csrf: string };
  beforeAll(async () => {
    db = await createTestDatabase();
    // Every route `clearline serve` has: its own and the service's list (src/service.ts uses the same
    // list). The card route's authorizer is never reached: probes are refused before it.
    app = buildHttpServer({ pool: db.pool, logger: createLogger({ level: "silent" }), extraRoutes: serviceRoutes({ pool: db.pool, authorizer: undefined as never }) });
    await app.ready();
    const tenant = await givenTenant(db.pool, "openapi");
    apiKey = tenant.apiKey;
    const secret = await givenOperator(db.pool, tenant.tenantId, "ada", "admin");
    const signedIn = await app.inject({ method: "POST", url: "/v1/ops/session", payload: { tenant: "openapi", name: "ada", secret } });
    session = { cookie: String(signedIn.headers["set-cookie"]).split(";")[0] ?? "", csrf: signedIn.json().csrf_token };
    doc = (await app.inject({ method: "GET", url: "/openapi.json" })).json();
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  // The console's HTML pages and the reference page (its HTML, assets and a copy of this document)
  // are not the API.
  const apiRoutes = () => registeredRoutes(app)
    .filter((route) => !route.url.startsWith("/console") && !route.url.startsWith(referencePagePath));
  const operationOf = (route: { method: string; url: string }) => doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];

  it("lists every route the server registers (the console's HTML pages and the reference page aside), so no route ships undocumented", () => {
    const undocumented = apiRoutes().filter((route) => operationOf(route) === undefined).map((route) => `${route.method} ${route.url}`);
    expect(doc.openapi).toBe("3.1.0");
    expect(undocumented).toEqual([]);
    for (const path of ["/v1/files", "/v1/ops/differences/{id}/correct", "/v1/reconciliations/differences/{id}/correct", "/v1/card-authorizations", "/v1/ops/proposals/{id}/approval"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(Object.keys(doc.paths).filter((path) => path.startsWith("/console") || path.startsWith(referencePagePath))).toEqual([]);
  });

  it("answers every /v1 refusal as application/problem+json", () => {
    for (const route of apiRoutes().filter((r) => r.url.startsWith("/v1/"))) {
      const refusals = Object.entries(operationOf(route)?.responses ?? {}).filter(([status]) => Number(status) >= 400);
      expect(refusals.length, `${route.method} ${route.url}`).toBeGreaterThan(0);
      for (const [status, response] of refusals) expect(Object.keys(response.content ?? {}), `${route.method} ${route.url} ${status}`).toEqual(["application/problem+json"]);
    }
  });

  it("names each route's security: the API key on /v1, the session on /v1/ops, and the CSRF token on every /v1/ops change", () => {
    for (const route of apiRoutes().filter((r) => r.url.startsWith("/v1/"))) {
      const schemes = (operationOf(route)?.security ?? []).flatMap((requirement) => Object.keys(requirement)).sort();
      const name = `${route.method} ${route.url}`;
      if (name === "POST /v1/ops/session") expect(schemes, name).toEqual([]);
      else if (!route.url.startsWith("/v1/ops/")) expect(schemes, name).toEqual(["bearer"]);
      else expect(schemes, name).toEqual(MUTATING.has(route.method) ? ["csrf", "session"] : ["session"]);
    }
  });

  it("requires the Idempotency-Key header on every mutating route but the ones idempotent by nature", () => {
    for (const route of apiRoutes().filter((r) => MUTATING.has(r.method))) {
      const name = `${route.method} ${openApiPath(route.url)}`;
      const header = operationOf(route)?.parameters?.find((p) => p.in === "header" && p.name === "Idempotency-Key");
      expect(header === undefined ? "no key" : "key", name).toBe(WITHOUT_IDEMPOTENCY_KEY.has(name) ? "no key" : "key");
    }
  });

  it("documents each JSON body as the zod schema its handler validates with (a probe through the real server says which one ran)", async () => {
    const checked: string[] = [];
    for (const route of apiRoutes().filter((r) => MUTATING.has(r.method))) {
      const name = `${route.method} ${route.url}`;
      const documented = operationOf(route)?.requestBody?.content["application/json"];
      if (!documented) continue;
      const zod = zodSchemaBehind(route.schema?.body);
      expect(zod, `${name} documents a JSON body not made from a zod schema`).toBeDefined();
      if (!zod) continue;
      expect(documented.schema, name).toEqual(jsonSchemaOf(zod));
      const probe = { openapi_probe: name };   // a member no body admits: refused before any effect
      const parse = vi.spyOn(zod, "safeParse");
      try {
        const answer = await app.inject({
          method: route.method as "POST", url: route.url.replace(/:([A-Za-z_]+)/g, "probe"), payload: probe,
          headers: route.url.startsWith("/v1/ops/") ? { cookie: session.cookie, "x-csrf-token": session.csrf } : { authorization: `Bearer ${apiKey}`, "idempotency-key": "probe" },
        });
        expect(answer.statusCode, `${name}: ${answer.body}`).toBe(400);
        const ranOnProbe = parse.mock.calls.some((call, i) => parse.mock.contexts[i] === zod && JSON.stringify(call[0]) === JSON.stringify(probe));
        expect(ranOnProbe, `${name} did not validate its body with the schema it documents`).toBe(true);
      } finally {
        parse.mockRestore();
      }
      checked.push(name);
    }
    expect(checked.length).toBeGreaterThanOrEqual(15);
  });
});
