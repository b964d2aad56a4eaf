import type { FastifyInstance } from "fastify";
import { createPayment, findPayment } from "../../payments/payments.ts";
import { isIntentInProgress } from "../../payments/intent-lock.ts";
import { decimalToMinor } from "../../protocols/iso4217/currency.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { runIdempotent } from "../idempotent-request.ts";
import { jsonReply, problemReply } from "../reply.ts";
import { describeIssues, paymentBody, paymentQuery } from "../schemas.ts";
import { paymentView } from "../views.ts";

const ENDPOINT = "POST /v1/payments";

export function registerPaymentRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.post("/v1/payments", async (request, reply) => {
    const tenant = tenantOf(request);
    const body = paymentBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "the payment request is invalid", { errors: describeIssues(body.error) }));
    const amount = decimalToMinor(body.data.amount, body.data.currency, { field: "amount" });
    if (!amount.ok) return send(reply, problemReply("REQUEST_INVALID", amount.error.message, { errors: [{ field: "amount", message: amount.error.message }] }));
    if (amount.value <= 0n) return send(reply, problemReply("REQUEST_INVALID", "the amount must be greater than zero", { errors: [{ field: "amount", message: "must be > 0" }] }));
    const paymentRequest = {
      clientReference: body.data.client_reference, amountMinor: amount.value, currency: body.data.currency,
      debtorAccount: body.data.debtor_account, creditorAccount: body.data.creditor_account, description: body.data.description ?? null,
    };
    const result = await runIdempotent({
      pool: deps.pool,
      tenantId: tenant.tenantId,
      endpoint: ENDPOINT,
      idempotencyKeyHeader: request.headers["idempotency-key"],
      // Normalized: "10.0" and "10.00" are the same request.
      canonical: {
        client_reference: paymentRequest.clientReference, amount_minor: amount.value.toString(), currency: paymentRequest.currency,
        debtor_account: paymentRequest.debtorAccount, creditor_account: paymentRequest.creditorAccount, description: paymentRequest.description,
      },
      effect: async (tx) => {
        const outcome = await createPayment(tx, tenant.tenantId, paymentRequest, ENDPOINT);
        if (outcome.kind === "created") return jsonReply(201, paymentView(outcome.payment), outcome.payment.paymentId);
        return problemReply(outcome.refusal.code, outcome.refusal.detail, outcome.refusal.extensions ?? {}, outcome.payment?.paymentId ?? null);
      },
    });
    return send(reply, result);
  });

  app.get<{ Params: { id: string } }>("/v1/payments/:id", async (request, reply) => {
    const payment = await findPayment(deps.pool, tenantOf(request).tenantId, { paymentId: request.params.id });
    if (!payment) return send(reply, problemReply("PAYMENT_NOT_FOUND", `no payment ${request.params.id}`));
    return send(reply, jsonReply(200, paymentView(payment)));
  });

  /**
   * Status by the caller's own reference: a client that timed out asks here instead of retrying
   * blind. An intent being processed right now answers 200 with status in_progress.
   */
  app.get("/v1/payments", async (request, reply) => {
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
