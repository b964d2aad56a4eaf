import type { Payment, Refund } from "../payments/payment.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";

/** The payment resource as published: snake_case, amounts as decimal strings. */
export function paymentView(payment: Payment): Record<string, unknown> {
  return {
    id: payment.paymentId,
    client_reference: payment.clientReference,
    status: payment.status,
    amount: minorToDecimal(payment.amountMinor, payment.currency),
    currency: payment.currency,
    debtor_account: payment.debtorAccount,
    creditor_account: payment.creditorAccount,
    description: payment.description,
    refunded_amount: minorToDecimal(payment.refundedMinor, payment.currency),
    decline_code: payment.declineCode,
    created_at: payment.createdAt,
  };
}

export function refundView(refund: Refund): Record<string, unknown> {
  return {
    id: refund.refundId,
    client_reference: refund.clientReference,
    payment_id: refund.paymentId,
    status: refund.status,
    amount: minorToDecimal(refund.amountMinor, refund.currency),
    currency: refund.currency,
    decline_code: refund.declineCode,
    created_at: refund.createdAt,
  };
}
