import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { apiPaymentKeyOf, apiPaymentRecord } from "../normalize/from-api.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import { decideRecords } from "../records/decide-records.ts";
import { enqueueEvent } from "../outbox/outbox-store.ts";
import { lockIntent } from "./intent-lock.ts";
import { intentId, transferKeyOf, type Payment, type Refusal } from "./payment.ts";

export interface PaymentRequest {
  clientReference: string;
  amountMinor: bigint;
  currency: string;
  debtorAccount: string;
  creditorAccount: string;
  description: string | null;
}

export type PaymentOutcome = { kind: "created"; payment: Payment } | { kind: "refused"; refusal: Refusal; payment?: Payment };

export const PAYMENT_COLUMNS = `payment_id, client_reference, status, decline_code, amount_minor, currency, debtor_account,
  creditor_account, description, refunded_minor, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

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

/**
 * One payment intent, decided by the record core (src/records) like any record of any channel:
 * the canonical record `api:<client_reference>` claims its key and its payment identity, and posts
 * one balanced transfer (debit the debtor, credit the creditor) under `api:<client_reference>:debit`,
 * in the caller's transaction. The intent is protected for ever: a second request with the same
 * client_reference (any Idempotency-Key, any day) posts nothing. What stays here is the API's own
 * contract: the payment resource, and the refusal each decision is answered with.
 */
export async function createPayment(tx: Tx, tenantId: string, request: PaymentRequest, scope: string, idempotencyKey?: string): Promise<PaymentOutcome> {
  await lockIntent(tx, tenantId, request.clientReference);
  const item = paymentRecordOf(tenantId, request, scope, idempotencyKey);
  const [decision] = await decideRecords(tx, { tenantId, arrival: { kind: "request", channel: "http", scope }, suspectWindowHours: 0 }, [item]);
  assert(decision?.outcome !== undefined, `payment ${request.clientReference} was decided`);
  switch (decision.outcome) {
    case "applied": {
      const transferKey = decision.transferKey;
      assert(transferKey === transferKeyOf(request.clientReference, "debit"), `payment ${request.clientReference} posted under its intent's key, not ${transferKey}`);
      const payment = await insertPayment(tx, tenantId, request, "succeeded", null, transferKey);
      // Told in the posting's transaction, under a key derived from the intent's transfer key.
      await enqueueEvent(tx, { tenantId, eventType: "payment.applied", eventKey: `${transferKey}:applied`, data: payment });
      return { kind: "created", payment };
    }
    case "rejected":
      return rejectedPayment(tx, tenantId, request, decision.code, decision.detail);
    default:
      return repeatedPayment(tx, tenantId, request, decision.code, decision.originalRef, decision.detail);
  }
}

/** The payment as the record core's input: its position names the endpoint and the Idempotency-Key it came with. */
export function paymentRecordOf(tenantId: string, request: PaymentRequest, scope: string, idempotencyKey: string | undefined): IngestRecord {
  return apiPaymentRecord(tenantId, request, {
    position: idempotencyKey === undefined ? scope : `${scope} Idempotency-Key ${idempotencyKey}`,
    sourceRef: `http:${intentId("pay", tenantId, request.clientReference)}`, valueDate: new Date().toISOString().slice(0, 10),
  });
}

/** A refusal at posting or before: declined for good (funds), or invalid input that claimed nothing. */
async function rejectedPayment(tx: Tx, tenantId: string, request: PaymentRequest, code: string | undefined, detail: string | undefined): Promise<PaymentOutcome> {
  if (code === "INGEST_INSUFFICIENT_FUNDS") {
    // A decision about money: the intent is declined for good, and a caller who lost the
    // response finds it by client_reference.
    const payment = await insertPayment(tx, tenantId, request, "declined", "insufficient_funds", null);
    return declinedPayment(request, payment);
  }
  return { kind: "refused", refusal: invalidPaymentRefusal(request, code, detail) };
}

/** The answer to a payment the funds declined; its declined row is stored. Shared with the group-committed batch (payment-batch.ts). */
export function declinedPayment(request: PaymentRequest, payment: Payment): PaymentOutcome {
  return { kind: "refused", refusal: { code: "INSUFFICIENT_FUNDS", detail: `account ${request.debtorAccount} cannot cover the amount`, extensions: { payment_id: payment.paymentId } }, payment };
}

/** The answer to a payment naming an account that is not there in its currency: nothing stored. */
export function invalidPaymentRefusal(request: PaymentRequest, code: string | undefined, detail: string | undefined): Refusal {
  if (code === "RECORD_ACCOUNT_UNKNOWN") return { code: "ACCOUNT_NOT_FOUND", detail: detail ?? "no such account" };
  if (code === "RECORD_ACCOUNT_CURRENCY_MISMATCH") return { code: "CURRENCY_MISMATCH", detail: detail ?? "currency mismatch" };
  throw new Error(`unexpected refusal of payment ${request.clientReference}: ${code ?? "(none)"} ${detail ?? ""}`);
}

/** The key or the payment identity was there before: this intent's own payment, or the same payment from another channel. */
async function repeatedPayment(tx: Tx, tenantId: string, request: PaymentRequest, code: string | undefined, originalRef: string | undefined, detail: string | undefined): Promise<PaymentOutcome> {
  const existing = isOtherChannel(code) ? undefined : await findPayment(tx, tenantId, { clientReference: request.clientReference });
  return { kind: "refused", refusal: repeatRefusal(request, code, originalRef, detail, existing) };
}

export function isOtherChannel(code: string | undefined): boolean {
  return code === "RECORD_SAME_PAYMENT" || code === "RECORD_IDENTITY_CONFLICT";
}

/** The answer to a repeated intent, given the payment stored under its client_reference (looked up unless `isOtherChannel`). */
export function repeatRefusal(request: PaymentRequest, code: string | undefined, originalRef: string | undefined, detail: string | undefined, existing: Payment | undefined): Refusal {
  if (isOtherChannel(code)) {
    return { code: "PAYMENT_ARRIVED_BY_OTHER_CHANNEL", detail: detail ?? "arrived through another channel", extensions: { natural_key: apiPaymentKeyOf(request.clientReference), original_ref: originalRef ?? null } };
  }
  if (!existing) {
    // The key was claimed by a request the core refused: its reference named another channel's payment.
    return { code: "PAYMENT_ARRIVED_BY_OTHER_CHANNEL", detail: `client_reference ${request.clientReference} was refused before: its end-to-end reference names a payment that arrived through another channel`, extensions: { natural_key: apiPaymentKeyOf(request.clientReference), original_ref: originalRef ?? null } };
  }
  return { code: "DUPLICATE_CLIENT_REFERENCE", detail: `payment ${existing.paymentId} has client_reference ${request.clientReference}`, extensions: { payment_id: existing.paymentId } };
}

async function insertPayment(tx: Tx, tenantId: string, request: PaymentRequest, status: Payment["status"], declineCode: string | null, transferKey: string | null): Promise<Payment> {
  const { rows } = await tx.query<PaymentRow>(
    `INSERT INTO payment (tenant_id, payment_id, client_reference, status, decline_code, amount_minor, currency, debtor_account, creditor_account, description, transfer_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${PAYMENT_COLUMNS}`,
    [tenantId, intentId("pay", tenantId, request.clientReference), request.clientReference, status, declineCode, request.amountMinor.toString(),
      request.currency, request.debtorAccount, request.creditorAccount, request.description, transferKey],
  );
  assert(rows[0], "insert returns the payment");
  return toPayment(rows[0]);
}
