import type { Refund } from "../payments/payment.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";

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
