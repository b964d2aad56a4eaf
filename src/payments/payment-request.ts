import { z } from "zod";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { describeIssues } from "../errors/schema-issues.ts";
import { runIdempotent, screenIdempotent, type IdempotentCall, type IdempotentReply } from "../requests/idempotent-request.ts";
import { jsonReply, problemReply, type Reply } from "../requests/reply.ts";
import { decimalToMinor } from "../protocols/iso4217/currency.ts";
import { paymentView } from "./payment-view.ts";
import type { PaymentGroupCommit } from "./payment-group-commit.ts";
import { createPayment } from "./payment-batch.ts";
import type { PaymentOutcome } from "./payments.ts";

export { paymentView, type PaymentView } from "./payment-view.ts";

/**
 * The payment instruction as published (POST /v1/payments, the HTTP and JetStream inboxes): one
 * zod schema, read by every channel here and documented in /openapi.json from the same object.
 * Amounts are decimal strings ("10.00"): a JSON number would pass through a float. The fields the
 * other request bodies share (src/api/schemas.ts) are exported with it.
 */
export const decimalAmount = z.string().regex(/^\d{1,18}(\.\d{1,4})?$/, "a decimal string such as \"10.00\"").describe("decimal amount in major units, as a string");
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code such as USD").describe("ISO 4217 currency code");
export const accountId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, "letters, digits, '_', '.', ':' or '-'").max(limits.http.accountIdCharsMax);
export const clientReference = z.string().min(1).max(limits.http.clientReferenceCharsMax).regex(/^[\x21-\x7e]+$/, "visible ASCII characters")
  .describe("the initiator's id of this intent: one payment per client_reference, for ever");

export const paymentBody = z.strictObject({
  client_reference: clientReference,
  amount: decimalAmount,
  currency: currencyCode,
  debtor_account: accountId,
  creditor_account: accountId,
  description: z.string().max(limits.http.descriptionCharsMax).optional(),
});

/**
 * One payment instruction, whatever carried it: POST /v1/payments (keyed by Idempotency-Key),
 * the HTTP inbox (Message-Id) and the JetStream inbox (Nats-Msg-Id). `endpoint` names the
 * channel, `key` is the identifier the source assigned; the claim, the payment and the stored
 * outcome commit in one transaction, so a redelivered instruction gets the stored outcome. With
 * `groupCommit` (POST /v1/payments) that transaction is shared with concurrent first-time payments.
 */
export async function applyPaymentRequest(
  pool: Pool, tenantId: string, endpoint: string, key: string | string[] | undefined, rawBody: unknown, options: { groupCommit?: PaymentGroupCommit } = {},
): Promise<IdempotentReply> {
  const body = paymentBody.safeParse(rawBody);
  if (!body.success) return { ...problemReply("REQUEST_INVALID", "the payment request is invalid", { errors: describeIssues(body.error) }), replayed: false };
  const amount = decimalToMinor(body.data.amount, body.data.currency, { field: "amount" });
  if (!amount.ok) return { ...problemReply("REQUEST_INVALID", amount.error.message, { errors: [{ field: "amount", message: amount.error.message }] }), replayed: false };
  if (amount.value <= 0n) return { ...problemReply("REQUEST_INVALID", "the amount must be greater than zero", { errors: [{ field: "amount", message: "must be > 0" }] }), replayed: false };
  // A transfer from an account to itself moves nothing and would post a debit and a credit on
  // one account: refused as the request it is, before any claim (docs/decisions/0067).
  if (body.data.debtor_account === body.data.creditor_account) {
    const detail = `debtor_account and creditor_account are both ${body.data.debtor_account}:`
      + " a payment moves money between two accounts";
    const errors = [{ field: "creditor_account", code: "PAYMENT_SAME_ACCOUNT", message: "must differ from debtor_account" }];
    return { ...problemReply("PAYMENT_SAME_ACCOUNT", detail, { errors }), replayed: false };
  }
  const paymentRequest = {
    clientReference: body.data.client_reference, amountMinor: amount.value, currency: body.data.currency,
    debtorAccount: body.data.debtor_account, creditorAccount: body.data.creditor_account, description: body.data.description ?? null,
  };
  const call: IdempotentCall = {
    pool, tenantId, endpoint, idempotencyKeyHeader: key,
    // Normalized: "10.0" and "10.00" are the same request.
    canonical: {
      client_reference: paymentRequest.clientReference, amount_minor: amount.value.toString(), currency: paymentRequest.currency,
      debtor_account: paymentRequest.debtorAccount, creditor_account: paymentRequest.creditorAccount, description: paymentRequest.description,
    },
    effect: async (tx) => replyOfPayment(await createPayment(tx, tenantId, paymentRequest, endpoint, typeof key === "string" ? key : undefined)),
  };
  if (!options.groupCommit) return runIdempotent(call);
  // Group commit (docs/decisions/0043): past the replay fast path, the claim and the payment go in a batch.
  const screened = await screenIdempotent(call);
  if (screened.kind === "answered") return screened.reply;
  return options.groupCommit.submit({ call, scope: screened.scope, digest: screened.digest, request: paymentRequest, replyOf: replyOfPayment });
}

/** The reply a payment's outcome is answered with, and stored for replay under its key. */
function replyOfPayment(outcome: PaymentOutcome): Reply {
  if (outcome.kind === "created") return jsonReply(201, paymentView(outcome.payment), outcome.payment.paymentId);
  return problemReply(outcome.refusal.code, outcome.refusal.detail, outcome.refusal.extensions ?? {}, outcome.payment?.paymentId ?? null);
}
