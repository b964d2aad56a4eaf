import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { httpRefundRecord } from "../normalize/from-http.ts";
import { decimalToMinor } from "../protocols/iso4217/currency.ts";
import { appliedTransferKeyOf, decideRecords, type Rejected } from "../records/index.ts";
import { lockIntent } from "./intent-lock.ts";
import {
  intentId, paymentTransferKeyOf, type Payment, type Refund, type Refusal,
} from "./payment.ts";
import { findPayment } from "./payments.ts";

export interface RefundRequest {
  clientReference: string;
  payment: { paymentId: string } | { clientReference: string };
  amountText: string;        // decimal, scaled by the payment's currency
  currency: string | null;   // optional in the request; must match the payment's when given
}

export type RefundOutcome = { kind: "created"; refund: Refund } | { kind: "refused"; refusal: Refusal };

export interface RefundRow {
  refund_id: string; client_reference: string; payment_id: string; status: "succeeded" | "declined"; decline_code: string | null;
  amount_minor: bigint; currency: string; created_at: string;
}

export const REFUND_COLUMNS = `refund_id, client_reference, payment_id, status, decline_code, amount_minor, currency,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

export function toRefund(row: RefundRow): Refund {
  return {
    refundId: row.refund_id, clientReference: row.client_reference, paymentId: row.payment_id, status: row.status, declineCode: row.decline_code,
    amountMinor: row.amount_minor, currency: row.currency, createdAt: row.created_at,
  };
}

export async function findRefund(db: Queryable, tenantId: string, clientReference: string): Promise<Refund | undefined> {
  const { rows } = await db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refund WHERE tenant_id = $1 AND client_reference = $2`, [tenantId, clientReference]);
  return rows[0] ? toRefund(rows[0]) : undefined;
}

/**
 * Refunds part or all of a payment, decided by the record core (docs/decisions/0038) like any
 * record: the canonical record `api-refund:<client_reference>` names the payment's key as its
 * original, and its rule undoes that much of it (the payment's legs mirrored, under
 * `api:<client_reference>:refund`), serialised against other refunds of the payment by the lock on
 * the payment's dedup mark, never above its amount. What stays here is the API's contract: the
 * request translated into the record, the decision into the refund resource or the refusal, and
 * the `refund` row and `payment.refunded_minor`, written in the decision's transaction.
 */
export async function createRefund(tx: Tx, tenantId: string, request: RefundRequest, scope: string, idempotencyKey?: string): Promise<RefundOutcome> {
  await lockIntent(tx, tenantId, request.clientReference);
  // The payment named by id or client_reference, to name its key and read the amount in its currency; the core locks its mark.
  const payment = await findPayment(tx, tenantId, request.payment);
  if (!payment) return { kind: "refused", refusal: { code: "PAYMENT_NOT_FOUND", detail: "no such payment to refund" } };
  const currency = request.currency ?? payment.currency;
  const amount = decimalToMinor(request.amountText, currency, { field: "amount" });
  if (!amount.ok) {
    if (currency !== payment.currency) return { kind: "refused", refusal: currencyMismatch(payment) };
    return { kind: "refused", refusal: { code: "REQUEST_INVALID", detail: amount.error.message } };
  }
  const refund = {
    clientReference: request.clientReference, paymentClientReference: payment.clientReference,
    amountMinor: amount.value, currency,
  };
  const item = httpRefundRecord(tenantId, refund, {
    position: idempotencyKey === undefined ? scope : `${scope} Idempotency-Key ${idempotencyKey}`,
    sourceRef: `http:${payment.paymentId}`, valueDate: new Date().toISOString().slice(0, 10),
  });
  const [decision] = await decideRecords(tx, { tenantId, arrival: { kind: "request", channel: "http", scope }, suspectWindowHours: 0 }, [item]);
  assert(decision !== undefined, `refund ${request.clientReference} was decided`);
  const outcome = decision.outcome;
  if (outcome.kind === "applied") {
    const transferKey = appliedTransferKeyOf(outcome);
    const intentKey = paymentTransferKeyOf(request.clientReference, "refund");
    const why = `refund ${request.clientReference} posted under its intent's key, `
      + `not ${transferKey}`;
    assert(transferKey === intentKey, why);
    await tx.query("UPDATE payment SET refunded_minor = refunded_minor + $3 WHERE tenant_id = $1 AND payment_id = $2", [tenantId, payment.paymentId, amount.value.toString()]);
    return { kind: "created", refund: await insertRefund(tx, tenantId, request.clientReference, payment, amount.value, "succeeded", transferKey) };
  }
  if (outcome.kind === "rejected") {
    return rejectedRefund(tx, tenantId, request.clientReference, payment, amount.value, outcome);
  }
  const existing = await findRefund(tx, tenantId, request.clientReference);
  const refundId = existing?.refundId ?? intentId("ref", tenantId, request.clientReference);
  return { kind: "refused", refusal: { code: "DUPLICATE_CLIENT_REFERENCE", detail: `refund ${refundId} has client_reference ${request.clientReference}`, extensions: { refund_id: refundId } } };
}

function currencyMismatch(payment: Payment): Refusal {
  return { code: "CURRENCY_MISMATCH", detail: `payment ${payment.paymentId} is in ${payment.currency}` };
}

/** The core's refusals: declined for good (funds: stored, like a declined payment), or input that claimed nothing. */
async function rejectedRefund(
  tx: Tx, tenantId: string, clientReference: string, payment: Payment, amountMinor: bigint,
  rejected: Rejected,
): Promise<RefundOutcome> {
  switch (rejected.code) {
    case "RECORD_INSUFFICIENT_FUNDS": {
      const refund = await insertRefund(tx, tenantId, clientReference, payment, amountMinor, "declined", null);
      return { kind: "refused", refusal: { code: "INSUFFICIENT_FUNDS", detail: `account ${payment.creditorAccount} cannot cover the refund`, extensions: { refund_id: refund.refundId } } };
    }
    case "RECORD_ORIGINAL_UNKNOWN":
      return { kind: "refused", refusal: { code: "PAYMENT_NOT_FOUND", detail: "no such payment to refund" } };
    case "RECORD_ORIGINAL_NOT_APPLIED":
      return { kind: "refused", refusal: { code: "PAYMENT_NOT_REFUNDABLE", detail: `payment ${payment.paymentId} is ${payment.status}` } };
    case "RECORD_UNDO_CURRENCY_MISMATCH":
      return { kind: "refused", refusal: currencyMismatch(payment) };
    case "RECORD_UNDO_EXCEEDS_ORIGINAL": {
      const refundableMinor = rejected.undoableMinor;
      assert(refundableMinor !== undefined, "an undo refused for exceeding says what remains");
      return { kind: "refused", refusal: { code: "REFUND_EXCEEDS_PAYMENT", detail: `at most ${refundableMinor} minor units of payment ${payment.paymentId} remain refundable`, extensions: { refundable_minor: refundableMinor.toString() } } };
    }
    default: {
      const refusal = `${rejected.code} ${rejected.detail}`;
      throw new Error(`unexpected refusal of refund ${clientReference}: ${refusal}`);
    }
  }
}

async function insertRefund(tx: Tx, tenantId: string, clientReference: string, payment: Payment, amountMinor: bigint, status: Refund["status"], transferKey: string | null): Promise<Refund> {
  const { rows } = await tx.query<RefundRow>(
    `INSERT INTO refund (tenant_id, refund_id, client_reference, payment_id, status, decline_code, amount_minor, currency, transfer_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${REFUND_COLUMNS}`,
    [tenantId, intentId("ref", tenantId, clientReference), clientReference, payment.paymentId, status,
      status === "declined" ? "insufficient_funds" : null, amountMinor.toString(), payment.currency, transferKey],
  );
  assert(rows[0], "insert returns the refund");
  return toRefund(rows[0]);
}
