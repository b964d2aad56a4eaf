import type { FastifyInstance } from "fastify";
import { recordHistory } from "../../records/index.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { routeSchema } from "../route-schema.ts";

const recordHistorySchema = routeSchema({
  operationId: "getRecordHistory",
  summary: "One payment's history across channels: every arrival of the natural key (or of the payment identity e2e:<reference>) by file, HTTP or ISO 8583, the decision on each, the review decisions and the ledger transfers, in time order",
  tags: ["records"], auth: "api_key", params: ["key"],
  ok: { 200: { description: "{ key, identity_key, records: [...], events: [...] (arrival, held, decision; oldest first), transfers: [...] }", schema: {
    type: "object", required: ["key", "records", "events", "transfers"],
    properties: { key: { type: "string" }, identity_key: { type: ["string", "null"] }, records: { type: "array", items: { type: "object" } }, events: { type: "array", items: { type: "object" } }, transfers: { type: "array", items: { type: "object" } } },
  } } },
  problems: { 404: "record_not_found" },
});

/**
 * GET /v1/records/{key}: one payment's history across channels (the key may be a natural key or
 * a payment identity, e2e:<reference>). The same document as `clearline record show --json`.
 */
export function registerRecordRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.get<{ Params: { key: string } }>("/v1/records/:key", { schema: recordHistorySchema }, async (request, reply) => {
    const history = await recordHistory(deps.pool, tenantOf(request).tenantId, request.params.key);
    if (!history) return send(reply, problemReply("RECORD_NOT_FOUND", `no record ${request.params.key}`));
    return send(reply, jsonReply(200, history));
  });
}
