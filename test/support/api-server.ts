import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { buildHttpServer } from "../../src/api/server.ts";
import type { Pool } from "../../src/db/pool.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTenant } from "../../src/tenants/tenants.ts";

export interface TestApi {
  baseUrl: string;
  close(): Promise<void>;
  logs: string[];
}

/** The real HTTP server (fastify, real routes, real database) on a free loopback port. */
export async function startTestApi(pool: Pool, extraRoutes: Array<(app: FastifyInstance) => void> = []): Promise<TestApi> {
  const logs: string[] = [];
  const destination = new Writable({ write(chunk, _encoding, done) { logs.push(String(chunk)); done(); } });
  const app = buildHttpServer({ pool, logger: createLogger({ level: "info", destination }), extraRoutes });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () => app.close(), logs };
}

export async function givenTenant(pool: Pool, name: string): Promise<{ tenantId: string; apiKey: string }> {
  const created = await createTenant(pool, name);
  if (!created.ok) throw new Error(created.error.message);
  return { tenantId: created.value.tenantId, apiKey: created.value.apiKey };
}
