import type { FastifyReply, FastifyRequest } from "fastify";
import type { Pool } from "../db/pool.ts";
import type { Tenant } from "../tenants/tenants.ts";
import type { IdempotentReply } from "../requests/idempotent-request.ts";
import type { Reply } from "../requests/reply.ts";

export interface ApiDependencies {
  pool: Pool;
}

declare module "fastify" {
  interface FastifyRequest {
    tenant?: Tenant;
  }
}

export function tenantOf(request: FastifyRequest): Tenant {
  if (!request.tenant) throw new Error("route reached without an authenticated tenant");
  return request.tenant;
}

/** Writes a stored or fresh reply byte for byte. */
export function send(reply: FastifyReply, result: Reply | IdempotentReply): FastifyReply {
  reply.code(result.status).header("content-type", result.contentType);
  if ("replayed" in result && result.replayed) reply.header("idempotent-replayed", "true");
  if ("retryAfterSeconds" in result && result.retryAfterSeconds !== undefined) reply.header("retry-after", String(result.retryAfterSeconds));
  return reply.send(result.body);
}
