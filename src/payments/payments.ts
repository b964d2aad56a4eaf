import type { Queryable } from "../db/pool.ts";
import type { ErrorCode } from "../errors/catalog.ts";
import { apiPaymentKeyOf, httpPaymentRecord } from "../normalize/from-http.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import { intentId, type Payment, type Refusal } from "./payment.ts";

export interface PaymentRequest {
  clientReference: string;
  amountMinor: bigint;
  currency: string;
  debtorAccount: string;
  creditorAccount: string;
  description: string | null;
}

export type PaymentOutcome = { kind: "created"; payment: Payment } | { kind: "refused"; refusal: Refusal; payment?: Payment };

/** A timestamp as the payment resource shows it: UTC, milliseconds. */
export function resourceTimeSql(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

export const PAYMENT_COLUMNS = `payment_id, client_reference, status, decline_code, amount_minor, currency, debtor_account,
  creditor_account, description, refunded_minor, ${resourceTimeSql("created_at")} AS created_at`;

export interface PaymentRow {
  payment_id: string; client_reference: string; status: "succeeded" | "declined"; decline_code: string | null;
  amount_minor: bigint; currency: string; debtor_account: string; creditor_account: string; description: string | null;
  refunded_minor: bigint; created_at: string;
}

export function toPayment(row: PaymentRow): Payment {
  return {
    paymentId: row.payment_id, clientReference: row.client_reference, status: row.status, declineCode: row.decline_code,
    amountMinor: row.amount_minor, currency: row.currency, debtorAccount: row.debtor_account, creditorAccount: row.creditor_account,
    description: row.description, refundedMinor: row.refunded_minor, createdAt: row.created_at,
  };
}

export async function findPayment(db: Queryable, tenantId: string, by: { paymentId: string } | { clientReference: string }, options: { forUpdate?: boolean } = {}): Promise<Payment | undefined> {
  const [column, value] = "paymentId" in by ? ["payment_id", by.paymentId] : ["client_reference", by.clientReference];
  const { rows } = await db.query<PaymentRow>(
    `SELECT ${PAYMENT_COLUMNS} FROM payment WHERE tenant_id = $1 AND ${column} = $2${options.forUpdate ? " FOR UPDATE" : ""}`,
    [tenantId, value],
  );
  return rows[0] ? toPayment(rows[0]) : undefined;
}

/** The payment as the record core's input: its position names the endpoint and the Idempotency-Key it came with. */
export function paymentRecordOf(
  tenantId: string, request: PaymentRequest, scope: string, idempotencyKey: string | undefined,
): ReceivedRecord {
  return httpPaymentRecord(tenantId, request, {
    position: idempotencyKey === undefined ? scope : `${scope} Idempotency-Key ${idempotencyKey}`,
    sourceRef: `http:${intentId("pay", tenantId, request.clientReference)}`, valueDate: new Date().toISOString().slice(0, 10),
  });
}

/** The answer to a payment the funds declined; its declined row is stored.  */
export function declinedPayment(request: PaymentRequest, payment: Payment): PaymentOutcome {
  return { kind: "refused", refusal: { code: "INSUFFICIENT_FUNDS", detail: `account ${request.debtorAccount} cannot cover the amount`, extensions: { payment_id: payment.paymentId } }, payment };
}

/** The answer to a payment naming an account that is not there in its currency: nothing stored. */
export function invalidPaymentRefusal(
  request: PaymentRequest, code: ErrorCode | undefined, detail: string | undefined,
): Refusal {
  if (code === "RECORD_ACCOUNT_UNKNOWN") return { code: "ACCOUNT_NOT_FOUND", detail: detail ?? "no such account" };
  if (code === "RECORD_ACCOUNT_CURRENCY_MISMATCH") return { code: "CURRENCY_MISMATCH", detail: detail ?? "currency mismatch" };
  throw new Error(`unexpected refusal of payment ${request.clientReference}: ${code ?? "(none)"} ${detail ?? ""}`);
}

export function isOtherChannel(code: ErrorCode | undefined): boolean {
  return code === "RECORD_SAME_PAYMENT" || code === "RECORD_IDENTITY_CONFLICT";
}

/** The answer to a repeated intent, given the payment stored under its client_reference (looked up unless `isOtherChannel`). */
export function repeatRefusal(
  request: PaymentRequest, code: ErrorCode | undefined, originalRef: string | undefined,
  detail: string | undefined, existing: Payment | undefined,
): Refusal {
  if (isOtherChannel(code)) {
    return { code: "PAYMENT_ARRIVED_BY_OTHER_CHANNEL", detail: detail ?? "arrived through another channel", extensions: { natural_key: apiPaymentKeyOf(request.clientReference), original_ref: originalRef ?? null } };
  }
  if (!existing) {
    // The key was claimed by a request the core refused: its reference named another channel's payment.
    return { code: "PAYMENT_ARRIVED_BY_OTHER_CHANNEL", detail: `client_reference ${request.clientReference} was refused before: its end-to-end reference names a payment that arrived through another channel`, extensions: { natural_key: apiPaymentKeyOf(request.clientReference), original_ref: originalRef ?? null } };
  }
  return { code: "DUPLICATE_CLIENT_REFERENCE", detail: `payment ${existing.paymentId} has client_reference ${request.clientReference}`, extensions: { payment_id: existing.paymentId } };
}
