import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import type { Payment } from "./payment.ts";

/** A payment as every channel shows it to a machine (docs/decisions/0107). */
export interface PaymentView {
  id: string;
  client_reference: string;
  status: Payment["status"];
  amount: string;
  currency: string;
  debtor_account: string;
  creditor_account: string;
  description: string | null;
  refunded_amount: string;
  decline_code: string | null;
  created_at: string;
}

/**
 * The payment resource as published: snake_case, amounts as decimal strings. The one shape of a
 * payment: the HTTP answer, `clearline payment show --json` and the payment.applied event's data.
 */
export function paymentView(payment: Payment): PaymentView {
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
