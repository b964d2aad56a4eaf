import fastifySwagger from "@fastify/swagger";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { limits } from "../config/limits.ts";
import {
  isCommitOutcomeUnknown, isDatabaseUnavailable, isTransientDatabaseFailure,
} from "../db/failure-kind.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { httpRequestDuration, registry } from "../observability/metrics.ts";
import {
  evaluateReadiness, type CheckResult, type ReadinessReport,
} from "../observability/readiness.ts";
import { repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { requestIdFrom, runInRequest } from "../observability/request-context.ts";
import { scopesAllow } from "../tenants/api-keys.ts";
import { TenantAuthenticator } from "../tenants/key-authenticator.ts";
import { send } from "./http-context.ts";
import { actionOfRoute } from "./key-scopes.ts";
import { JsonBodyRefused, refusalErrors, registerStrictJsonBodies } from "./json-body-parser.ts";
import { drainRequestBody, refuseOversizeBeforeContinue } from "./oversize-body.ts";
import type { IdempotentReply } from "../requests/idempotent-request.ts";
import { problemReply } from "../requests/reply.ts";
import { recordRoutes } from "./route-list.ts";
import { openApiDocument } from "./openapi-document.ts";
import { registerReferencePage } from "./reference-page.ts";
import { routeSchema, type Answer } from "./route-schema.ts";
import { registerStorableTextGuard } from "./storable-text-guard.ts";
import { registerAccountRoutes } from "./routes/accounts.ts";
import { registerPaymentRoutes } from "./routes/payments.ts";
import { registerRefundRoutes } from "./routes/refunds.ts";
import { registerConsoleRoutes } from "./console/routes.ts";
import type { WebhookSecretKeys } from "../outbox/webhooks/secret-box.ts";
import { registerOperationsRoutes } from "./routes/operations.ts";
import { registerReviewRoutes } from "./routes/reviews.ts";
import { registerRecordRoutes } from "./routes/records.ts";
import { registerTransferRoutes } from "./routes/transfers.ts";

export interface HttpDependencies {
  pool: Pool;
  logger: Logger;
  /** The service's readiness (database, migrations, sources, scheme link, lag), for /readyz; absent: the database alone. */
  readiness?: () => Promise<ReadinessReport>;
  /** Whether the process should be left running (/livez); absent: always. Asks no database. */
  liveness?: () => CheckResult;
  /** The key webhook signing secrets are sealed with (serve's); absent: read on first use. */
  webhookKeys?: WebhookSecretKeys;
  /** Further routes from other adapters (file uploads, card authorizations), added by the composition root. */
  extraRoutes?: Array<(app: FastifyInstance) => void>;
}

/** 413 for a body past its route's bound, after reading the rest of it (bounded) so the client sees it. */
async function refuseOversizeBody(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const drained = await drainRequestBody(request.raw, limits.http.oversizeBodyDrainBytesMax);
  if (!drained) reply.header("connection", "close");
  const bound = request.routeOptions.bodyLimit ?? limits.http.bodyBytesMax;
  return send(reply, problemReply("REQUEST_TOO_LARGE", `the body exceeds ${bound} bytes, the bound of ${request.method} ${request.routeOptions.url ?? request.url.split("?")[0]}`));
}

/**
 * The HTTP surface. /healthz answers 200 only when the database answers; /metrics serves
 * Prometheus text; /openapi.json the published contract; /v1/* needs a tenant's API key.
 */
export function buildHttpServer(deps: HttpDependencies): FastifyInstance {
  const app = Fastify({
    // pino 10 is a superset of the logger interface fastify types against (pino 9). Warn level:
    // no info line per request (fastify's request logging), failures still logged.
    loggerInstance: deps.logger.child({ component: "http" }, { level: "warn" }) as unknown as FastifyBaseLogger,
    bodyLimit: limits.http.bodyBytesMax,
    // Request-Id: the caller's when well-formed, else generated (issue 33 item 7). The logger's
    // mixin names it on every line of the request, so fastify's own reqId binding is left out.
    requestIdHeader: false,
    genReqId: (raw) => requestIdFrom(raw.headers["request-id"]),
    childLoggerFactory: (logger, _bindings, options) => logger.child({}, options),
  });
  recordRoutes(app);
  registerRequestIds(app);
  // One line per interval with a count, not one per refused request (decision 0082).
  const unavailable = repeatedFailureLog(deps.logger.child({ component: "http" }),
    "requests answered 503: the database does not answer");
  app.addHook("onClose", async () => unavailable.close());
  registerApiKeys(app, deps.pool, deps.logger);

  app.setNotFoundHandler((request, reply) => send(reply, problemReply("NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`)));

  app.setErrorHandler((error, request, reply) => {
    const statusCode = (error as { statusCode?: number }).statusCode;
    if (statusCode === 413) return refuseOversizeBody(request, reply);
    if (error instanceof JsonBodyRefused) {
      return send(reply, problemReply(error.refusal.code, error.message, { errors: refusalErrors(error.refusal) }));
    }
    if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
      // Fastify's own input errors: malformed JSON, body too large, wrong content type.
      return send(reply, problemReply("REQUEST_INVALID", error instanceof Error ? error.message : String(error)));
    }
    const unavailableAnswer = unavailableReply(error);
    if (unavailableAnswer) {
      // Counted, one line per interval (decision 0082): an outage must not flood the log.
      unavailable.failed(error, { url: request.url, kind: unavailableAnswer.logLine });
      return send(reply, unavailableAnswer.reply);
    }
    request.log.error({ err: error, url: request.url }, "request failed");
    // Tell a client to retry only when a retry can succeed: a deterministic failure would just
    // fail again, and a client told "safe to retry" would loop on it.
    const retryable = isTransientDatabaseFailure(error);
    return send(reply, problemReply("INTERNAL_ERROR", retryable
      ? "a transient database conflict; nothing was stored for this request, so a retry with the same Idempotency-Key is safe and may succeed"
      : "an unexpected failure; nothing was stored for this request, and the same request will fail the same way, so do not resend it unchanged", { retryable }));
  });

  registerStrictJsonBodies(app);
  registerStorableTextGuard(app);
  refuseOversizeBeforeContinue(app.server);

  // Latency by route template (never the raw URL: ids would make the label unbounded).
  app.addHook("onResponse", async (request, reply) => {
    httpRequestDuration.observe({
      method: request.method, route: request.routeOptions.url ?? "unmatched", status_class: `${Math.floor(reply.statusCode / 100)}xx`,
    }, reply.elapsedTime / 1_000);
  });

  // The route schemas document, they do not validate: every handler validates with zod and answers
  // its own typed problem, in its own order (session, CSRF, role, then body); fast-json-stringify
  // would drop fields a response schema does not list (docs/decisions/0035).
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Registered before the routes (in the plugin below), so its onRoute hook sees every one of them.
  void app.register(fastifySwagger, { openapi: openApiDocument() });
  registerReferencePage(app);
  void app.register(async (routes) => {
    registerServiceRoutes(routes, deps);
    registerAccountRoutes(routes, deps);
    registerPaymentRoutes(routes, deps);
    registerRefundRoutes(routes, deps);
    registerReviewRoutes(routes, deps);
    registerRecordRoutes(routes, deps);
    registerTransferRoutes(routes, deps);
    registerOperationsRoutes(routes, deps);
    registerConsoleRoutes(routes, deps);
    for (const register of deps.extraRoutes ?? []) register(routes);
  });
  return app;
}

/**
 * /v1/* but the operators' routes needs an API key whose scopes allow the route (decision 0097).
 * The authenticator listens for revocations while the server is open.
 */
function registerApiKeys(app: FastifyInstance, pool: Pool, logger: Logger): void {
  const log = logger.child({ component: "api-keys" });
  // A listener that cannot reconnect (the database is down) is one line per interval (0082).
  const lost = repeatedFailureLog(log, "api key listener lost: no key cached until it listens");
  const authenticator = new TenantAuthenticator(pool, {
    onEvent: (event) => {
      if (event.kind === "lost") lost.failed(new Error(event.reason));
      else if (event.kind === "listening") {
        lost.succeeded();
        log.info("api key listener listening: keys cached");
      } else log.info({ key_id: event.keyId }, "api key changed: dropped from the cache");
    },
  });
  authenticator.start();
  app.addHook("onClose", async () => {
    await authenticator.stop();
    lost.close();
  });

  app.addHook("onRequest", async (request, reply) => {
    // /v1/ops/* are the operators' routes: a session cookie, not an API key (routes/operations.ts).
    if (!request.url.startsWith("/v1/") || request.url.startsWith("/v1/ops/")) return;
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    const holder = match?.[1] ? await authenticator.authenticate(match[1]) : undefined;
    if (!holder) {
      return send(reply.header("www-authenticate", "Bearer"),
        problemReply("UNAUTHORIZED", "send Authorization: Bearer <api key>"));
    }
    const routeUrl = request.routeOptions.url;
    // An unknown route is the not-found handler's (404), whatever the key.
    const action = routeUrl === undefined ? "read" : actionOfRoute(request.method, routeUrl);
    if (action === undefined || !scopesAllow(holder.scopes, action)) {
      const needed = action ?? "a scope no key has";
      return send(reply, problemReply("API_KEY_SCOPE_FORBIDDEN", `key ${holder.keyId} has scopes `
        + `${holder.scopes.join(", ")}; ${request.method} ${routeUrl ?? ""} needs ${needed}`,
      { scopes: holder.scopes, needed: action ?? null }));
    }
    request.tenant = holder.tenant;
  });
}

/**
 * Every answer carries its Request-Id, and the rest of a request (hooks, body, handler, error
 * handler) runs in its context, so every log line names it. The first hook: a 401 or 404 has it.
 */
function registerRequestIds(app: FastifyInstance): void {
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("request-id", request.id);
    runInRequest(request.id, done);
  });
}

/**
 * The 503 of a request the database could not serve: outcome_unknown once COMMIT was sent (never
 * "nothing was stored"; docs/decisions/0078), service_unavailable when it was not.
 */
function unavailableReply(error: unknown): { reply: IdempotentReply; logLine: string } | undefined {
  const retryAfterSeconds = limits.availability.unavailableRetryAfterSeconds;
  if (isCommitOutcomeUnknown(error)) {
    const detail = `the database's answer to COMMIT was lost (${error.reason}): the request may `
      + "have been stored; retry with the same Idempotency-Key to learn its outcome";
    const reply = { ...problemReply("OUTCOME_UNKNOWN", detail), replayed: false };
    return { reply: { ...reply, retryAfterSeconds }, logLine: "commit outcome unknown" };
  }
  if (!isDatabaseUnavailable(error)) return undefined;
  const detail = "the database does not answer; nothing was stored";
  const reply = { ...problemReply("SERVICE_UNAVAILABLE", detail), replayed: false };
  return { reply: { ...reply, retryAfterSeconds }, logLine: "database unavailable" };
}

/** /healthz, /livez, /readyz, /metrics and /openapi.json: no API key. */
function registerServiceRoutes(app: FastifyInstance, deps: HttpDependencies): void {
  // A check's 503 is its own JSON body (what failed), not a problem.
  const plain = (operationId: string, summary: string, ok: Answer, failed?: string) => ({
    schema: routeSchema({
      operationId, summary, tags: ["service"], auth: "public", ok: { 200: ok },
      ...(failed === undefined ? {} : { refusalBodies: { 503: failed } }),
    }),
  });
  const healthz = plain("getHealth", "200 when the database answers, else 503", "{ status: ok }",
    "{ status: unavailable, reason }: the database does not answer");
  app.get("/healthz", healthz, async (_request, reply) => {
    try {
      await deps.pool.query("SELECT 1");
      return { status: "ok" };
    } catch {
      return reply.code(503).send({ status: "unavailable", reason: "database does not answer" });
    }
  });

  // Liveness: the process answers, and has not been without a database past its bound (decision
  // 0081). It never queries the database: a slow database must not get the process restarted.
  const livez = plain("getLiveness", "The process answers; 503 once no database answered for"
    + " CLEARLINE_LIVENESS_WITHOUT_DATABASE_MS", "{ status: ok }", "{ status: not_live, reason }");
  app.get("/livez", livez, async (_request, reply) => {
    const live = deps.liveness?.() ?? { ok: true };
    if (live.ok) return { status: "ok" };
    return reply.code(503).send({ status: "not_live", reason: live.reason });
  });

  // Readiness: whether this instance should be sent work, with the reason of each failing check.
  const readyz = plain("getReadiness", "Whether this instance should be sent work, with each"
    + " failing check's reason (503 when not ready)", "{ status, checks }",
    "{ status, checks }: not ready, each failing check with its reason");
  app.get("/readyz", readyz, async (_request, reply) => {
    const report = deps.readiness ? await deps.readiness() : await evaluateReadiness([
      { name: "database", check: async () => { await deps.pool.query("SELECT 1"); return { ok: true }; } },
    ]);
    return reply.code(report.status === "ready" ? 200 : 503).send(report);
  });

  const metrics = plain("getMetrics", "Prometheus metrics (text exposition format)", {
    description: "the metrics", mediaType: "text/plain", schema: { type: "string" },
  });
  app.get("/metrics", metrics, async (_request, reply) => {
    reply.header("content-type", registry.contentType);
    return registry.metrics();
  });

  // Built once, on the first request: by then every route (extra routes included) has been added.
  let document: string | undefined;
  app.get("/openapi.json", plain("getOpenApiDocument", "This document: generated from every route's schema", "the OpenAPI 3.1 document"), async (_request, reply) => {
    document ??= JSON.stringify(app.swagger());
    return reply.header("content-type", "application/json").send(document);
  });
}
