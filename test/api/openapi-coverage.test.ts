import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { openApiDocument } from "../../src/api/openapi.ts";
import { registeredRoutes } from "../../src/api/route-list.ts";
import { registerFileRoutes } from "../../src/api/routes/files.ts";
import { registerCardAuthorizationRoutes } from "../../src/api/routes/card-authorizations.ts";
import { buildHttpServer } from "../../src/api/server.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

describe("the OpenAPI document", () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The service's routes, with the extra ones the composition root adds (src/service.ts); the card
    // route's authorizer is never called here: only the route's existence is read.
    app = buildHttpServer({ pool: db.pool, logger: createLogger({ level: "silent" }), extraRoutes: [
      (server) => registerCardAuthorizationRoutes(server, { authorizer: undefined as never }),
      (server) => registerFileRoutes(server, { pool: db.pool }),
    ] });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  it("documents every /v1 route the server registers, so a route cannot ship undocumented", () => {
    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    const undocumented = registeredRoutes(app)
      .filter((route) => route.url.startsWith("/v1/"))
      .map((route) => ({ method: route.method.toLowerCase(), path: route.url.replace(/:([A-Za-z_]+)/g, "{$1}") }))
      .filter((route) => paths[route.path]?.[route.method] === undefined)
      .map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(undocumented).toEqual([]);
  });
});
