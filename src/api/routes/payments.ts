import type { FastifyInstance } from "fastify";
import { findPayment } from "../../payments/payments.ts";
import { paymentsPage } from "../../payments/payment-pages.ts";
import { isIntentInProgress } from "../../payments/intent-lock.ts";
import { paymentGroupCommitOf } from "../../payments/payment-group-commit.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { applyPaymentRequest, paymentView } from "../../payments/payment-request.ts";
import { jsonReply, problemReply, type Reply } from "../../requests/reply.ts";
import { instantOf, paymentListQuery } from "../list-queries.ts";
import { listAnswer, listReply, readListQuery } from "../list-reply.ts";
import { paymentExample, paymentItem } from "../list-resources.ts";
import { paymentBody } from "../../payments/payment-request.ts";
import { paymentResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const ENDPOINT = "POST /v1/payments";
const payment = { description: "the payment", schema: paymentResource, example: paymentExample };

const createPaymentSchema = routeSchema({
  operationId: "createPayment",
  summary: "Create a payment (idempotent)", tags: ["payments"], auth: "api_key", body: paymentBody, idempotencyKey: true,
  ok: { 201: { description: "created, or replayed with Idempotent-Replayed: true", schema: paymentResource } },
  problems: {
    404: "account not found (stored)", 409: "request_in_progress (retry with the same key after Retry-After) or duplicate_client_reference (stored)",
    422: "idempotency_key_reuse, insufficient_funds (stored), currency_mismatch or text_character_invalid (a NUL or unpaired surrogate; not stored)",
  },
});
const paymentByIdSchema = routeSchema({ operationId: "getPayment", summary: "A payment", tags: ["payments"], auth: "api_key", params: ["id"], ok: { 200: payment }, problems: { 404: "payment_not_found" } });
const listPaymentsSchema = routeSchema({
  operationId: "listPayments",
  summary: "The tenant's payments a page at a time, the oldest first (filters: status, created "
    + "range); with client_reference instead, that one intent's status, including one in progress",
  tags: ["payments"], auth: "api_key", query: paymentListQuery,
  ok: { 200: listAnswer("payment", paymentItem, paymentExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, an unknown status, "
      + "or list parameters beside client_reference",
    404: "payment_not_found: with client_reference, no such intent (the answer is then the "
      + "payment, or { client_reference, status: in_progress })",
  },
});

export function registerPaymentRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.post("/v1/payments", { schema: createPaymentSchema }, async (request, reply) => {
    return send(reply, await applyPaymentRequest(deps.pool, tenantOf(request).tenantId, ENDPOINT, request.headers["idempotency-key"], request.body, { groupCommit: paymentGroupCommitOf(deps.pool) }));
  });

  app.get<{ Params: { id: string } }>("/v1/payments/:id", { schema: paymentByIdSchema }, async (request, reply) => {
    const payment = await findPayment(deps.pool, tenantOf(request).tenantId, { paymentId: request.params.id });
    if (!payment) return send(reply, problemReply("PAYMENT_NOT_FOUND", `no payment ${request.params.id}`));
    return send(reply, jsonReply(200, paymentView(payment)));
  });

  app.get("/v1/payments", { schema: listPaymentsSchema }, async (request, reply) => {
    const read = readListQuery(paymentListQuery, request.query, "payment list");
    if (!read.ok) return send(reply, read.reply);
    const tenantId = tenantOf(request).tenantId;
    const { query } = read;
    if (query.client_reference !== undefined) {
      return send(reply, await paymentStatusReply(deps, tenantId, query.client_reference, request.query));
    }
    const page = await paymentsPage(deps.pool, tenantId, {
      after: read.after, status: query.status, limit: query.limit,
      createdFrom: instantOf(query.created_from), createdBefore: instantOf(query.created_before),
    });
    return send(reply, listReply(page, paymentView));
  });
}

/**
 * Status by the caller's own reference: a client that timed out asks here instead of retrying
 * blind. An intent being processed right now answers 200 with status in_progress.
 */
async function paymentStatusReply(
  deps: ApiDependencies, tenantId: string, reference: string, raw: unknown,
): Promise<Reply> {
  const beside = Object.keys(raw as object).filter((name) => name !== "client_reference");
  if (beside.length > 0) {
    return problemReply("REQUEST_INVALID", "client_reference reads one intent: no list parameter beside it",
      { errors: beside.map((field) => ({ field, message: "not with client_reference" })) });
  }
  const payment = await findPayment(deps.pool, tenantId, { clientReference: reference });
  if (payment) return jsonReply(200, paymentView(payment));
  if (await isIntentInProgress(deps.pool, tenantId, reference)) {
    return jsonReply(200, { client_reference: reference, status: "in_progress" });
  }
  return problemReply("PAYMENT_NOT_FOUND", `no payment with client_reference ${reference}`);
}
