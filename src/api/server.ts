import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { registry } from "../observability/metrics.ts";

export interface HttpDependencies {
  pool: Pool;
  logger: Logger;
}

/**
 * The HTTP surface. /healthz answers 200 only when the database answers, so a load balancer
 * takes an instance out when its database is gone; /metrics serves Prometheus text.
 */
export function buildHttpServer(deps: HttpDependencies): FastifyInstance {
  const app = Fastify({
    // pino 10 is a superset of the logger interface fastify types against (pino 9).
    loggerInstance: deps.logger.child({ component: "http" }) as unknown as FastifyBaseLogger,
    disableRequestLogging: true });

  app.get("/healthz", async (_request, reply) => {
    try {
      await deps.pool.query("SELECT 1");
      return { status: "ok" };
    } catch {
      return reply.code(503).send({ status: "unavailable", reason: "database does not answer" });
    }
  });

  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", registry.contentType);
    return registry.metrics();
  });

  return app;
}
