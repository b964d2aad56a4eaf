import type { ReceivedRecord } from "./received-record.ts";
import { fingerprintOf } from "./fingerprint.ts";
import { httpSettlementDate } from "./settlement-date.ts";

/**
 * The business day of acceptance on the currency's calendar (docs/decisions/0101): nothing when
 * the calendar cannot place the date (the transfer then settles on its value date).
 */
function acceptedSettlement(valueDate: string, currency: string): { settlementDate?: string } {
  const settled = httpSettlementDate(valueDate, currency);
  return settled.ok ? { settlementDate: settled.value } : {};
}

/** A payment as the HTTP API (or an inbox) received it, already validated by the adapter. */
export interface HttpPayment {
  clientReference: string;
  amountMinor: bigint;
  currency: string;
  debtorAccount: string;
  creditorAccount: string;
}

/** Where the request came from: the adapter's words for it (endpoint and Idempotency-Key), and the posting's source reference. */
export interface HttpArrival {
  position: string;       // e.g. "POST /v1/payments Idempotency-Key 7c1f..."
  sourceRef: string;      // the posting's source_ref: http:<payment id>
  valueDate: string;      // YYYY-MM-DD, the day the request was accepted
}

/**
 * The HTTP channel's natural key: the tenant's client_reference, for ever (the intent's identity),
 * under the prefix `api:` its keys have always had (a key never changes with a name, decision
 * 0068).
 */
export function apiPaymentKeyOf(clientReference: string): string {
  return `api:${clientReference}`;
}

/**
 * An HTTP payment as a canonical record: key `api:<client_reference>`, fingerprint over what
 * the payment says (amount, currency, both accounts), and the client_reference as the payment's
 * end-to-end reference (protocols/identity/cross-channel-keys.json). Pure.
 */
export function httpPaymentRecord(
  tenantId: string, payment: HttpPayment, arrival: HttpArrival,
): ReceivedRecord {
  const naturalKey = apiPaymentKeyOf(payment.clientReference);
  return {
    // No link ids: a return in a file never reverses an API payment by itself (the cross-channel rules link payments, not returns).
    index: 1, position: arrival.position, linkIds: [], originalIds: [],
    record: {
      tenantId, channel: "http", naturalKey, intentId: payment.clientReference, kind: "payment",
      amount: payment.amountMinor, currency: payment.currency, valueDate: arrival.valueDate,
      ...acceptedSettlement(arrival.valueDate, payment.currency),
      fingerprint: fingerprintOf({ amount: payment.amountMinor, currency: payment.currency, debtor: payment.debtorAccount, creditor: payment.creditorAccount }),
      source: { position: arrival.position, ref: arrival.sourceRef },
      attributes: { clientReference: payment.clientReference, endToEndId: payment.clientReference, debtorAccount: payment.debtorAccount, creditorAccount: payment.creditorAccount },
    },
  };
}

/** A refund as the HTTP API received it: the payment it names already resolved to that payment's client_reference, the amount scaled by its currency. */
export interface HttpRefund {
  clientReference: string;
  paymentClientReference: string;
  amountMinor: bigint;
  currency: string;
}

/**
 * A refund's natural key: its own client_reference in its own namespace. The API lets a refund
 * and a payment share a client_reference, so `api:<ref>` (the payment's key) cannot be it; and
 * `api-refund:` never begins with `api:`, so no payment's key can equal a refund's
 * (docs/decisions/0038).
 */
export function apiRefundKeyOf(clientReference: string): string {
  return `api-refund:${clientReference}`;
}

/**
 * An HTTP refund as a canonical record: key `api-refund:<client_reference>`, `original` the
 * refunded payment's key, fingerprint over what the refund says (the payment it names, amount,
 * currency). Its rule (protocols/posting-rules/api.json) undoes that much of the payment. Pure.
 */
export function httpRefundRecord(
  tenantId: string, refund: HttpRefund, arrival: HttpArrival,
): ReceivedRecord {
  const original = apiPaymentKeyOf(refund.paymentClientReference);
  return {
    index: 1, position: arrival.position, linkIds: [], originalIds: [],
    record: {
      tenantId, channel: "http", naturalKey: apiRefundKeyOf(refund.clientReference),
      intentId: refund.clientReference, kind: "refund",
      amount: refund.amountMinor, currency: refund.currency, valueDate: arrival.valueDate, original,
      ...acceptedSettlement(arrival.valueDate, refund.currency),
      fingerprint: fingerprintOf({ original, amount: refund.amountMinor, currency: refund.currency }),
      source: { position: arrival.position, ref: arrival.sourceRef },
      attributes: { clientReference: refund.clientReference },
    },
  };
}
