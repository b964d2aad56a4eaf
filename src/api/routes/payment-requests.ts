import type { FastifyInstance } from "fastify";
import { send, tenantOf, type ApiDependencies } from "../http-context.ts";
import { applyPaymentRequest } from "../../payments/payment-request.ts";
import { paymentResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";
import { paymentBody } from "../../payments/payment-request.ts";

/** The inbox's channel name in idempotency records: the source's Message-Id is the key. */
export const HTTP_INBOX_ENDPOINT = "inbox http payment-requests";

/**
 * The HTTP inbox: another service's payment instruction keyed by the id it assigned to the
 * message (Message-Id), applied once; a redelivery gets the stored outcome (same status, same
 * body). The body is that of POST /v1/payments.
 */
const paymentRequestSchema = routeSchema({
  operationId: "receivePaymentRequest",
  summary: "The HTTP inbox: another service's payment instruction, applied once per Message-Id (the body of POST /v1/payments)", tags: ["payments"], auth: "api_key", body: paymentBody,
  ok: { 201: { description: "applied; a redelivery of the Message-Id gets the stored outcome (same status, same body)", schema: paymentResource } },
  problems: { 404: "account not found (stored)", 409: "request_in_progress or duplicate_client_reference", 422: "message_id reused for another instruction, insufficient_funds or currency_mismatch" },
});

export function registerPaymentRequestRoutes(app: FastifyInstance, deps: Pick<ApiDependencies, "pool">): void {
  app.post("/v1/payment-requests", { schema: { ...paymentRequestSchema, headers: { type: "object", properties: { "Message-Id": { type: "string", minLength: 1, maxLength: 255, description: "the id the sending service gave the message: the key of the effect" } }, required: ["Message-Id"] } } }, async (request, reply) => {
    return send(reply, await applyPaymentRequest(deps.pool, tenantOf(request).tenantId, HTTP_INBOX_ENDPOINT, request.headers["message-id"], request.body));
  });
}
