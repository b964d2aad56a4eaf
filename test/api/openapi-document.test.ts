import { createServer, type AddressInfo } from "node:net";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceRoutes } from "../../src/api/service-routes.ts";
import { createPool } from "../../src/db/pool.ts";
import { startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

type Response = { description?: string; content?: Record<string, { schema?: unknown }> };
type Operation = {
  operationId?: string; summary?: string; tags?: string[];
  security?: Array<Record<string, string[]>>; responses?: Record<string, Response>;
};
type Document = {
  openapi: string; info: { title: string; version: string; license?: { name?: string } };
  servers?: Array<{ url: string }>; tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
};

/** The refusals answered with the route's own JSON, not a problem: a check says what failed. */
const CHECK_BODIES = new Set(["GET /healthz 503", "GET /livez 503", "GET /readyz 503"]);

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
const statuses = (operation: Operation) => Object.keys(operation.responses ?? {}).map(Number);

function operationsOf(doc: Document): Array<{ name: string; operation: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item)
    .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })));
}

/** Every `$ref` anywhere in the document, with where it stands. */
function refsOf(node: unknown, at = "#"): Array<{ at: string; ref: string }> {
  if (typeof node !== "object" || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => key === "$ref" && typeof value === "string"
    ? [{ at, ref: value }] : refsOf(value, `${at}/${key}`));
}

/** What a local JSON Pointer (`#/components/...`) names in the document, or undefined. */
function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  const tokens = ref.slice(2).split("/").map((t) => decodeURIComponent(t).replace(/~1/g, "/").replace(/~0/g, "~"));
  return tokens.reduce<unknown>((node, token) => typeof node === "object" && node !== null
    ? (node as Record<string, unknown>)[token] : undefined, doc);
}

/**
 * The refusals any operation can answer (a malformed request, a failure, the database away) and
 * those its security adds: 401 without the credential, 403 without the CSRF token.
 */
function refusalsOwed(operation: Operation): number[] {
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  return [400, 500, 503, ...(schemes.length > 0 ? [401] : []), ...(schemes.includes("csrf") ? [403] : [])];
}

describe("GET /openapi.json on a running server", () => {
  let db: TestDatabase;
  let api: TestApi;
  let doc: Document;
  beforeAll(async () => {
    db = await createTestDatabase();
    // Every route `clearline serve` has; the card route's authorizer is never called here.
    api = await startTestApi(db.pool, serviceRoutes({ pool: db.pool, authorizer: undefined as never }));
    const answer = await fetch(`${api.baseUrl}/openapi.json`);
    expect(answer.status).toBe(200);
    doc = await answer.json() as Document;
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("names every operation with a unique camelCase operationId", () => {
    const ids = operationsOf(doc).map(({ operation }) => operation.operationId);
    for (const [index, id] of ids.entries()) expect(id, operationsOf(doc)[index]?.name).toMatch(/^[a-z][A-Za-z0-9]*$/);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(ids.length).toBeGreaterThanOrEqual(50);
  });

  it("gives every operation a summary and at least one 2xx answer", () => {
    for (const { name, operation } of operationsOf(doc)) {
      expect(operation.summary?.trim(), name).toBeTruthy();
      expect(statuses(operation).filter((status) => status >= 200 && status < 300), name).not.toEqual([]);
    }
  });

  it("declares on every operation the refusals its kind can answer, each a described problem but a check's 503", () => {
    for (const { name, operation } of operationsOf(doc)) {
      expect(statuses(operation), name).toEqual(expect.arrayContaining(refusalsOwed(operation)));
      for (const status of statuses(operation).filter((s) => s >= 400)) {
        const response = operation.responses?.[String(status)];
        expect(response?.description?.trim(), `${name} ${status}`).toBeTruthy();
        const media = CHECK_BODIES.has(`${name} ${status}`) ? "application/json" : "application/problem+json";
        expect(Object.keys(response?.content ?? {}), `${name} ${status}`).toEqual([media]);
        const schema = response?.content?.[media]?.schema as { required?: string[] } | undefined;
        if (media === "application/problem+json") expect(schema?.required, `${name} ${status}`).toEqual(expect.arrayContaining(["code", "status", "detail"]));
      }
    }
  });

  it("documents the 503 of /healthz and /readyz as the JSON they send when no database answers", async () => {
    const deadPool = createPool(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`, { max: 1 });
    const deadApi = await startTestApi(deadPool);
    try {
      for (const path of ["/healthz", "/readyz"]) {
        const answer = await fetch(`${deadApi.baseUrl}${path}`);
        expect(answer.status, path).toBe(503);
        const documented = Object.keys(doc.paths[path]?.get?.responses?.["503"]?.content ?? {});
        expect(documented.map((media) => answer.headers.get("content-type")?.startsWith(media)), path).toEqual([true]);
        expect((await answer.json() as { status?: string }).status, path).toMatch(/^(unavailable|not_ready)$/);
      }
    } finally {
      await deadApi.close();
      await deadPool.end();
    }
  });

  it("documents the media type /metrics and /openapi.json answer with", async () => {
    for (const path of ["/metrics", "/openapi.json"]) {
      const answer = await fetch(`${api.baseUrl}${path}`);
      expect(answer.status, path).toBe(200);
      const documented = Object.keys(doc.paths[path]?.get?.responses?.["200"]?.content ?? {});
      expect(documented.map((media) => answer.headers.get("content-type")?.startsWith(media)), path).toEqual([true]);
    }
  });

  it("names its servers, its licence, and a described tag for every tag an operation uses", () => {
    expect(doc.servers?.map((server) => server.url)).toEqual(["/"]);
    expect(doc.info.license?.name).toBe("Proprietary");
    const described = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description ?? ""]));
    for (const { name, operation } of operationsOf(doc)) {
      expect(operation.tags?.length, name).toBeGreaterThan(0);
      for (const tag of operation.tags ?? []) expect(described.get(tag)?.trim(), `${name} tag ${tag}`).toBeTruthy();
    }
  });

  it("resolves every $ref inside the document", () => {
    const unresolved = refsOf(doc).filter(({ ref }) => resolvePointer(doc, ref) === undefined);
    expect(unresolved).toEqual([]);
  });

  it("is an OpenAPI 3.x document in shape: version, info, and operations with responses under /paths", () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path.startsWith("/"), path).toBe(true);
      for (const method of Object.keys(item)) expect(METHODS.has(method), `${path} ${method}`).toBe(true);
    }
  });

  it("passes Redocly's recommended ruleset (structure against the OpenAPI 3.1 schema included) with no error and no warning", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
    const findings = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ""}: ${p.message}`);
    expect(findings).toEqual([]);
  });
});
