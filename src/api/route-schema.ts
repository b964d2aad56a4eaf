import type { FastifySchema } from "fastify";
import { z } from "zod";

/**
 * A route's OpenAPI description, written where the route is (docs/decisions/0035). @fastify/swagger
 * reads the `schema` this returns from every route and /openapi.json is built from them, so the
 * document cannot miss a route. A JSON body is documented as `z.toJSONSchema` of the zod schema the
 * handler validates with: one source. The schemas document; they do not validate (server.ts sets
 * a validator compiler that accepts everything: the handlers refuse with their own typed problems).
 */
type JsonSchema = Record<string, unknown>;

/** Who may call: the tenant's API key; a signed-in operator reading; one changing something (session + CSRF token); anyone. */
export type RouteAuth = "api_key" | "session" | "session_csrf" | "public";

/**
 * What the route answers: a description, or a description and the JSON Schema of the body, sent
 * as application/json unless a media type is named (the Prometheus text of /metrics).
 */
export type Answer = string | {
  description: string; schema: JsonSchema; mediaType?: string;
  /** An example body, shown by the reference page (it must match the schema: Redocly checks). */
  example?: unknown;
};

/**
 * The document's tags, each with its description (the top-level `tags` list). A route names only
 * these, so an operation cannot carry a tag the document does not describe.
 */
export const routeTags = {
  service: "Health, readiness, metrics and this document; no API key",
  accounts: "Ledger accounts of the API key's tenant: open one, read its balance and statement",
  payments: "Payments, refunds and the HTTP inbox of payment instructions, each applied once",
  reviews: "Held records (conflicts, suspects) of the API key's tenant and their decisions",
  records: "One payment's history across channels, by its natural key",
  files: "Clearing files uploaded over HTTP: receive, apply and report per record",
  reconciliation: "Their side against ours for a settlement account: imports, runs, differences",
  cards: "Card authorizations sent to the card scheme (ISO 8583)",
  operations: "The operators' routes: a session cookie and, for a change, its CSRF token",
} as const;
export type RouteTag = keyof typeof routeTags;

export interface RouteDoc {
  /**
   * The operation's name in the document (`operationId`): camelCase, unique, chosen here and never
   * derived from the path, because generated clients name their methods by it and a renamed path
   * must not rename a client's method. Routes under /v1/ops start with `ops`.
   */
  operationId: string;
  summary: string;
  tags: readonly RouteTag[];
  auth: RouteAuth;
  /** The zod schema the handler validates a JSON body with, or "raw" for a route reading the bytes (file uploads). */
  body?: z.ZodType | "raw";
  /** Query parameters: the zod schema the handler parses them with, or plain JSON Schema properties. */
  query?: z.ZodType | Record<string, JsonSchema>;
  /** Query parameters the route requires (for a `query` given as properties). */
  queryRequired?: readonly string[];
  /** Path parameter names (`:id` in the URL), each a string. */
  params?: readonly string[];
  /** The route runs inside the Idempotency-Key's claim (docs/api/idempotency.md). */
  idempotencyKey?: boolean;
  /** Success answers by status. */
  ok: Record<number, Answer>;
  /** Refusals by status, each an RFC 9457 problem. */
  problems?: Record<number, string>;
  /**
   * Answers at a refusal status whose body is not a problem (a health check's 503 says which check
   * failed): each replaces the problem documented for its status.
   */
  refusalBodies?: Record<number, Answer>;
}

export const problemSchema: JsonSchema = {
  type: "object",
  description: "RFC 9457 problem details; `code` is stable (docs/errors.md)",
  properties: { type: { type: "string" }, title: { type: "string" }, status: { type: "integer" }, code: { type: "string" }, detail: { type: "string" } },
  required: ["type", "title", "status", "code", "detail"],
};

export const idempotencyKeyHeader: JsonSchema = {
  type: "string", minLength: 1, maxLength: 255,
  description: "1 to 255 visible ASCII characters (a UUID v4 is recommended), scoped to tenant + endpoint. A repeat with the same key and the same body returns the stored response with `Idempotent-Replayed: true` for 7 days. See docs/api/idempotency.md.",
};

/** The security schemes every route's `security` names (the document's components). */
export const securitySchemes = {
  bearer: { type: "http", scheme: "bearer", description: "the tenant's API key: Authorization: Bearer <key>" },
  session: { type: "apiKey", in: "cookie", name: "clearline_session", description: "an operator's session cookie from POST /v1/ops/session (HttpOnly, SameSite=Strict)" },
  csrf: { type: "apiKey", in: "header", name: "x-csrf-token", description: "the session's CSRF token (sign-in answer, GET /v1/ops/session); a console form sends csrf_token instead" },
} as const;

const securityOf: Record<RouteAuth, Array<Record<string, string[]>>> = {
  api_key: [{ bearer: [] }],
  session: [{ session: [] }],
  session_csrf: [{ session: [], csrf: [] }],
  public: [],
};

/** Refusals any route of the kind can answer, before its own. */
const problemsOf: Record<RouteAuth, Record<number, string>> = {
  api_key: {
    401: "unauthorized: no or unknown API key",
    403: "api_key_scope_forbidden: the key's scopes do not allow this change (every key reads); "
      + "nothing done",
  },
  session: { 401: "operator_session_missing: sign in first" },
  session_csrf: { 401: "operator_session_missing: sign in first", 403: "operator_csrf_refused (no CSRF token) or operator_role_forbidden (the role does not allow it); nothing done" },
  public: {},
};

const SERVER_PROBLEMS: Record<number, string> = {
  500: "internal_error: nothing stored; retry with the same key only when the problem says retryable: true",
  503: "service_unavailable: the database does not answer; nothing stored, retry with the same key",
};

const documentedZod = new WeakMap<object, z.ZodType>();

/** The JSON Schema of a zod schema as a client sends it (defaults optional), remembered as coming from that zod schema. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as JsonSchema;
  documentedZod.set(json, schema);
  return json;
}

/** The zod schema a documented JSON Schema was made from; undefined for one written by hand. */
export function zodSchemaBehind(json: unknown): z.ZodType | undefined {
  return typeof json === "object" && json !== null ? documentedZod.get(json) : undefined;
}

const withProblemContent = (description: string) => ({ description, content: { "application/problem+json": { schema: problemSchema } } });

function answerOf(status: string, answer: Answer): unknown {
  if (typeof answer !== "string") {
    const mediaType = answer.mediaType ?? "application/json";
    const example = answer.example === undefined ? {} : { example: answer.example };
    return {
      description: answer.description,
      content: { [mediaType]: { schema: answer.schema, ...example } },
    };
  }
  if (status === "204") return { description: answer, type: "null" };
  return { description: answer, content: { "application/json": { schema: { type: "object" } } } };
}

function responsesOf(doc: RouteDoc): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(doc.ok)) {
    responses[status] = answerOf(status, answer);
  }
  const problems = {
    400: "request_invalid: the request is invalid (nothing stored; fix and resend)",
    ...problemsOf[doc.auth], ...SERVER_PROBLEMS, ...doc.problems,
  };
  for (const [status, description] of Object.entries(problems)) {
    responses[status] = withProblemContent(description);
  }
  for (const [status, answer] of Object.entries(doc.refusalBodies ?? {})) {
    responses[status] = answerOf(status, answer);
  }
  return responses;
}

function bodyOf(body: RouteDoc["body"]): JsonSchema | undefined {
  if (body === undefined) return undefined;
  if (body === "raw") return { content: { "application/octet-stream": { schema: { type: "string", format: "binary", description: "the file's bytes" } } } };
  return jsonSchemaOf(body);
}

function queryOf(doc: RouteDoc): JsonSchema | undefined {
  if (doc.query === undefined) return undefined;
  if (doc.query instanceof z.ZodType) return jsonSchemaOf(doc.query);
  return { type: "object", properties: doc.query, ...(doc.queryRequired ? { required: [...doc.queryRequired] } : {}) };
}

/** The route's `schema` option: what @fastify/swagger turns into the route's OpenAPI operation. */
export function routeSchema(doc: RouteDoc): FastifySchema {
  const body = bodyOf(doc.body);
  const querystring = queryOf(doc);
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    tags: [...doc.tags],
    security: securityOf[doc.auth],
    ...(doc.params ? { params: { type: "object", properties: Object.fromEntries(doc.params.map((name) => [name, { type: "string" }])), required: [...doc.params] } } : {}),
    ...(querystring ? { querystring } : {}),
    ...(doc.idempotencyKey ? { headers: { type: "object", properties: { "Idempotency-Key": idempotencyKeyHeader }, required: ["Idempotency-Key"] } } : {}),
    ...(body ? { body } : {}),
    response: responsesOf(doc),
  } as FastifySchema;
}

