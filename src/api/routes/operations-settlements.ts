import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import {
  partnerSettlementTotals, settlementTotalsDocument,
} from "../../partners/settlement-totals.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { send } from "../http-context.ts";
import { operatorOf } from "../operator-session.ts";
import { settlementTotalsQuery } from "../operations-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const bucket = {
  type: "object",
  properties: {
    count: { type: "integer", description: "transfers" },
    to_us: { type: "string", description: "debits of our settlement account (decimal)" },
    to_partner: { type: "string", description: "credits of our settlement account (decimal)" },
  },
} as const;

const totalsSchema = routeSchema({
  operationId: "opsGetSettlementTotals",
  summary: "What our books expect to settle with a partner on a date, per currency: credits, "
    + "debits, returns and corrections by each transfer's settlement date (docs/decisions/0101)",
  tags: ["operations"], auth: "session", query: settlementTotalsQuery,
  ok: { 200: { description: "{ partner, settlement_date, currencies }", schema: {
    type: "object",
    properties: {
      partner: { type: "string" }, partner_id: { type: "string" },
      settlement_date: { type: "string" },
      currencies: { type: "array", items: { type: "object", properties: {
        currency: { type: "string" }, account: { type: "string" },
        credits: bucket, debits: bucket, returns: bucket, corrections: bucket,
        net_to_us: { type: "string", description: "to us less to the partner (decimal)" },
      } } },
    },
  } } },
  problems: { 400: "request_invalid: the date is not one the calendars cover",
    404: "partner_not_found" },
});

/** GET /v1/ops/settlements?partner=&date= for signed-in operators. */
export function registerSettlementOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/settlements", { schema: totalsSchema }, async (request, reply) => {
    const query = settlementTotalsQuery.safeParse(request.query);
    if (!query.success) {
      const errors = describeIssues(query.error);
      return send(reply, problemReply("REQUEST_INVALID", "the settlements query is invalid",
        { errors }));
    }
    const tenantId = operatorOf(request).tenantId;
    const read = await partnerSettlementTotals(deps.pool, tenantId, query.data.partner,
      query.data.date);
    if (!read.ok) {
      const code = read.error.code === "PARTNER_NOT_FOUND"
        ? "PARTNER_NOT_FOUND" : "REQUEST_INVALID";
      return send(reply, problemReply(code, read.error.message));
    }
    return send(reply, jsonReply(200, settlementTotalsDocument(read.value)));
  });
}
