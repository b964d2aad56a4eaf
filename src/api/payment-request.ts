import type { Pool } from "../db/pool.ts";
import { createPayment } from "../payments/payments.ts";
import { decimalToMinor } from "../protocols/iso4217/currency.ts";
import { runIdempotent, type IdempotentReply } from "./idempotent-request.ts";
import { jsonReply, problemReply } from "./reply.ts";
import { describeIssues, paymentBody } from "./schemas.ts";
import { paymentView } from "./views.ts";

/**
 * One payment instruction, whatever carried it: POST /v1/payments (keyed by Idempotency-Key),
 * the HTTP inbox (Message-Id) and the JetStream inbox (Nats-Msg-Id). `endpoint` names the
 * channel, `key` is the identifier the source assigned; the claim, the payment and the stored
 * outcome commit in one transaction, so a redelivered instruction gets the stored outcome.
 */
export async function applyPaymentRequest(pool: Pool, tenantId: string, endpoint: string, key: string | string[] | undefined, rawBody: unknown): Promise<IdempotentReply> {
  const body = paymentBody.safeParse(rawBody);
  if (!body.success) return { ...problemReply("REQUEST_INVALID", "the payment request is invalid", { errors: describeIssues(body.error) }), replayed: false };
  const amount = decimalToMinor(body.data.amount, body.data.currency, { field: "amount" });
  if (!amount.ok) return { ...problemReply("REQUEST_INVALID", amount.error.message, { errors: [{ field: "amount", message: amount.error.message }] }), replayed: false };
  if (amount.value <= 0n) return { ...problemReply("REQUEST_INVALID", "the amount must be greater than zero", { errors: [{ field: "amount", message: "must be > 0" }] }), replayed: false };
  const paymentRequest = {
    clientReference: body.data.client_reference, amountMinor: amount.value, currency: body.data.currency,
    debtorAccount: body.data.debtor_account, creditorAccount: body.data.creditor_account, description: body.data.description ?? null,
  };
  return runIdempotent({
    pool, tenantId, endpoint, idempotencyKeyHeader: key,
    // Normalized: "10.0" and "10.00" are the same request.
    canonical: {
      client_reference: paymentRequest.clientReference, amount_minor: amount.value.toString(), currency: paymentRequest.currency,
      debtor_account: paymentRequest.debtorAccount, creditor_account: paymentRequest.creditorAccount, description: paymentRequest.description,
    },
    effect: async (tx) => {
      const outcome = await createPayment(tx, tenantId, paymentRequest, endpoint, typeof key === "string" ? key : undefined);
      if (outcome.kind === "created") return jsonReply(201, paymentView(outcome.payment), outcome.payment.paymentId);
      return problemReply(outcome.refusal.code, outcome.refusal.detail, outcome.refusal.extensions ?? {}, outcome.payment?.paymentId ?? null);
    },
  });
}
