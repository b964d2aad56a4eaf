import type { FastifyInstance } from "fastify";
import { createRefund } from "../../payments/refunds.ts";
import { findRefundById, refundsPage } from "../../payments/payment-pages.ts";
import { instantOf, refundListQuery } from "../list-queries.ts";
import { itemAnswer, listAnswer, listReply, readListQuery } from "../list-reply.ts";
import { refundExample, refundItem } from "../list-resources.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { refundBody } from "../schemas.ts";
import { routeSchema } from "../route-schema.ts";
import { refundView } from "../views.ts";

const ENDPOINT = "POST /v1/refunds";
const createRefundSchema = routeSchema({
  operationId: "createRefund",
  summary: "Refund part or all of a payment (idempotent)", tags: ["payments"], auth: "api_key", body: refundBody, idempotencyKey: true,
  ok: { 201: "the refund: created, or replayed with Idempotent-Replayed: true" },
  problems: { 404: "payment_not_found (stored)", 409: "request_in_progress or duplicate_client_reference", 422: "refund_exceeds_payment, payment_not_refundable, insufficient_funds or idempotency_key_reuse" },
});
const listRefundsSchema = routeSchema({
  operationId: "listRefunds",
  summary: "The tenant's refunds a page at a time, the oldest first (filters: status, payment, "
    + "created range)",
  tags: ["payments"], auth: "api_key", query: refundListQuery,
  ok: { 200: listAnswer("refund", refundItem, refundExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, or an unknown status",
  },
});
const getRefundSchema = routeSchema({
  operationId: "getRefund", summary: "A refund", tags: ["payments"], auth: "api_key",
  params: ["id"], ok: { 200: itemAnswer("the refund", refundItem, refundExample) },
  problems: { 404: "refund_not_found" },
});
const AMOUNT_PATTERN = /^(\d+)(?:\.(\d+))?$/;

/**
 * The refund's currency is the payment's, known only inside the transaction; so the amount is
 * normalized here as digits and scaled there. "5", "5.0" and "5.00" are one request.
 */
function normalizedAmount(text: string): { whole: string; fraction: string } {
  const match = AMOUNT_PATTERN.exec(text);
  const whole = (match?.[1] ?? "0").replace(/^0+(?=\d)/, "");
  const fraction = (match?.[2] ?? "").replace(/0+$/, "");
  return { whole, fraction };
}

export function registerRefundRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  registerRefundReads(app, deps);
  app.post("/v1/refunds", { schema: createRefundSchema }, async (request, reply) => {
    const tenant = tenantOf(request);
    const body = refundBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "the refund request is invalid", { errors: describeIssues(body.error) }));
    const amount = normalizedAmount(body.data.amount);
    if (/^0*$/.test(amount.whole + amount.fraction)) return send(reply, problemReply("REQUEST_INVALID", "the amount must be greater than zero", { errors: [{ field: "amount", message: "must be > 0" }] }));
    const paymentRef = body.data.payment_id !== undefined ? { paymentId: body.data.payment_id } : { clientReference: body.data.payment_client_reference ?? "" };
    const result = await runIdempotent({
      pool: deps.pool,
      tenantId: tenant.tenantId,
      endpoint: ENDPOINT,
      idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: {
        client_reference: body.data.client_reference, payment_id: body.data.payment_id ?? null,
        payment_client_reference: body.data.payment_client_reference ?? null,
        amount: `${amount.whole}.${amount.fraction}`, currency: body.data.currency ?? null,
      },
      effect: async (tx) => {
        const outcome = await createRefund(tx, tenant.tenantId, {
          clientReference: body.data.client_reference, payment: paymentRef, amountText: body.data.amount, currency: body.data.currency ?? null,
        }, ENDPOINT, typeof request.headers["idempotency-key"] === "string" ? request.headers["idempotency-key"] : undefined);
        if (outcome.kind === "created") return jsonReply(201, refundView(outcome.refund), outcome.refund.refundId);
        return problemReply(outcome.refusal.code, outcome.refusal.detail, outcome.refusal.extensions ?? {});
      },
    });
    return send(reply, result);
  });
}

/** GET /v1/refunds (a page) and GET /v1/refunds/{id}. */
function registerRefundReads(app: FastifyInstance, deps: ApiDependencies): void {
  app.get("/v1/refunds", { schema: listRefundsSchema }, async (request, reply) => {
    const read = readListQuery(refundListQuery, request.query, "refund list");
    if (!read.ok) return send(reply, read.reply);
    const { query } = read;
    const page = await refundsPage(deps.pool, tenantOf(request).tenantId, {
      after: read.after, status: query.status, paymentId: query.payment_id, limit: query.limit,
      createdFrom: instantOf(query.created_from), createdBefore: instantOf(query.created_before),
    });
    return send(reply, listReply(page, refundView));
  });

  const getOne = { schema: getRefundSchema };
  app.get<{ Params: { id: string } }>("/v1/refunds/:id", getOne, async (request, reply) => {
    const { id } = request.params;
    const refund = await findRefundById(deps.pool, tenantOf(request).tenantId, id);
    if (!refund) return send(reply, problemReply("REFUND_NOT_FOUND", `no refund ${id}`));
    return send(reply, jsonReply(200, refundView(refund)));
  });
}
