import type { FastifyInstance } from "fastify";
import { findPayment } from "../../payments/payments.ts";
import { isIntentInProgress } from "../../payments/intent-lock.ts";
import { paymentGroupCommitOf } from "../../payments/payment-group-commit.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { applyPaymentRequest, paymentView } from "../../payments/payment-request.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { paymentQuery } from "../schemas.ts";
import { paymentBody } from "../../payments/payment-request.ts";
import { paymentResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const ENDPOINT = "POST /v1/payments";
const payment = { description: "the payment", schema: paymentResource };

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
const paymentByReferenceSchema = routeSchema({
  operationId: "getPaymentByClientReference",
  summary: "Status of a payment intent by client_reference, including one in progress", tags: ["payments"], auth: "api_key", query: paymentQuery,
  ok: { 200: { description: "the payment, or { client_reference, status: in_progress }", schema: paymentResource } }, problems: { 404: "payment_not_found: no such intent" },
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

  /**
   * Status by the caller's own reference: a client that timed out asks here instead of retrying
   * blind. An intent being processed right now answers 200 with status in_progress.
   */
  app.get("/v1/payments", { schema: paymentByReferenceSchema }, async (request, reply) => {
    const query = paymentQuery.safeParse(request.query);
    if (!query.success) return send(reply, problemReply("REQUEST_INVALID", "client_reference is required", { errors: describeIssues(query.error) }));
    const tenantId = tenantOf(request).tenantId;
    const payment = await findPayment(deps.pool, tenantId, { clientReference: query.data.client_reference });
    if (payment) return send(reply, jsonReply(200, paymentView(payment)));
    if (await isIntentInProgress(deps.pool, tenantId, query.data.client_reference)) {
      return send(reply, jsonReply(200, { client_reference: query.data.client_reference, status: "in_progress" }));
    }
    return send(reply, problemReply("PAYMENT_NOT_FOUND", `no payment with client_reference ${query.data.client_reference}`));
  });
}
