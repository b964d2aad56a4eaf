import type { FastifyInstance } from "fastify";
import { recordHistory } from "../../records/record-history.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";

/**
 * GET /v1/records/{key}: one payment's history across channels (the key may be a natural key or
 * a payment identity, e2e:<reference>). The same document as `clearline record show --json`.
 */
export function registerRecordRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.get<{ Params: { key: string } }>("/v1/records/:key", async (request, reply) => {
    const history = await recordHistory(deps.pool, tenantOf(request).tenantId, request.params.key);
    if (!history) return send(reply, problemReply("RECORD_NOT_FOUND", `no record ${request.params.key}`));
    return send(reply, jsonReply(200, history));
  });
}
