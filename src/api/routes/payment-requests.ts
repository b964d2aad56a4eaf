import type { FastifyInstance } from "fastify";
import { send, tenantOf, type ApiDependencies } from "../http-context.ts";
import { applyPaymentRequest } from "../../payments/payment-request.ts";

/** The inbox's channel name in idempotency records: the source's Message-Id is the key. */
export const HTTP_INBOX_ENDPOINT = "inbox http payment-requests";

/**
 * The HTTP inbox: another service's payment instruction keyed by the id it assigned to the
 * message (Message-Id), applied once; a redelivery gets the stored outcome (same status, same
 * body). The body is that of POST /v1/payments.
 */
export function registerPaymentRequestRoutes(app: FastifyInstance, deps: Pick<ApiDependencies, "pool">): void {
  app.post("/v1/payment-requests", async (request, reply) => {
    return send(reply, await applyPaymentRequest(deps.pool, tenantOf(request).tenantId, HTTP_INBOX_ENDPOINT, request.headers["message-id"], request.body));
  });
}
