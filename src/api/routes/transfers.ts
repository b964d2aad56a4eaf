import type { FastifyInstance } from "fastify";
import { findTransfer, transfersPage } from "../../ledger/index.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { send, tenantOf, type ApiDependencies } from "../http-context.ts";
import { instantOf, transferListQuery } from "../list-queries.ts";
import { itemAnswer, listAnswer, listReply, readListQuery } from "../list-reply.ts";
import { transferExample, transferItem } from "../list-resources.ts";
import { routeSchema } from "../route-schema.ts";
import { transferView } from "../views.ts";

const listSchema = routeSchema({
  operationId: "listTransfers",
  summary: "The tenant's ledger transfers with their legs a page at a time, in posting order "
    + "(filters: kind, value date range, posted range)",
  tags: ["accounts"], auth: "api_key", query: transferListQuery,
  ok: { 200: listAnswer("transfer", transferItem, transferExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, or a date that is none",
  },
});
const getSchema = routeSchema({
  operationId: "getTransfer", summary: "One ledger transfer by its key, with its legs",
  tags: ["accounts"], auth: "api_key", params: ["key"],
  ok: { 200: itemAnswer("the transfer", transferItem, transferExample) },
  problems: { 404: "transfer_not_found" },
});

/**
 * GET /v1/transfers (a page, in the order the ledger's transactions began: transfers posted
 * while a client pages come after the ones it began with) and GET /v1/transfers/{key}.
 */
export function registerTransferRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.get("/v1/transfers", { schema: listSchema }, async (request, reply) => {
    const read = readListQuery(transferListQuery, request.query, "transfer list");
    if (!read.ok) return send(reply, read.reply);
    const { query } = read;
    const page = await transfersPage(deps.pool, tenantOf(request).tenantId, {
      after: read.after, kind: query.kind, valueFrom: query.value_from, valueTo: query.value_to,
      createdFrom: instantOf(query.created_from), createdBefore: instantOf(query.created_before),
      limit: query.limit,
    });
    return send(reply, listReply(page, transferView));
  });

  const getOne = { schema: getSchema };
  app.get<{ Params: { key: string } }>("/v1/transfers/:key", getOne, async (request, reply) => {
    const { key } = request.params;
    const transfer = await findTransfer(deps.pool, tenantOf(request).tenantId, key);
    if (!transfer) return send(reply, problemReply("TRANSFER_NOT_FOUND", `no transfer ${key}`));
    return send(reply, jsonReply(200, transferView(transfer)));
  });
}
