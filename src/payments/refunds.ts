import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { postTransfer } from "../ledger/post-transfers.ts";
import { decimalToMinor } from "../protocols/iso4217/currency.ts";
import { lockIntent } from "./intent-lock.ts";
import { intentId, transferKeyOf, type Refund, type Refusal } from "./payment.ts";
import { findPayment } from "./payments.ts";

export interface RefundRequest {
  clientReference: string;
  payment: { paymentId: string } | { clientReference: string };
  amountText: string;        // decimal, scaled by the payment's currency
  currency: string | null;   // optional in the request; must match the payment's when given
}

export type RefundOutcome = { kind: "created"; refund: Refund } | { kind: "refused"; refusal: Refusal };

interface RefundRow {
  refund_id: string; client_reference: string; payment_id: string; status: "succeeded" | "declined"; decline_code: string | null;
  amount_minor: bigint; currency: string; created_at: string;
}

const REFUND_COLUMNS = `refund_id, client_reference, payment_id, status, decline_code, amount_minor, currency,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

function toRefund(row: RefundRow): Refund {
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
 * Refunds part or all of a payment: the reverse transfer (debit the creditor, credit the
 * debtor). The payment row is locked FOR UPDATE, so concurrent refunds of one payment are
 * serialized and their sum can never exceed it (the table's CHECK backs this up).
 */
export async function createRefund(tx: Tx, tenantId: string, request: RefundRequest, scope: string): Promise<RefundOutcome> {
  await lockIntent(tx, tenantId, request.clientReference);
  const existing = await findRefund(tx, tenantId, request.clientReference);
  if (existing) {
    await recordDedupEvents(tx, [{ tenantId, channel: "http", scope, dedupKey: request.clientReference, reason: "duplicate_client_reference", originalRef: existing.refundId }]);
    return { kind: "refused", refusal: { code: "DUPLICATE_CLIENT_REFERENCE", detail: `refund ${existing.refundId} has client_reference ${request.clientReference}`, extensions: { refund_id: existing.refundId } } };
  }
  const payment = await findPayment(tx, tenantId, request.payment, { forUpdate: true });
  if (!payment) return { kind: "refused", refusal: { code: "PAYMENT_NOT_FOUND", detail: "no such payment to refund" } };
  if (payment.status !== "succeeded") return { kind: "refused", refusal: { code: "PAYMENT_NOT_REFUNDABLE", detail: `payment ${payment.paymentId} is ${payment.status}` } };
  if (request.currency !== null && request.currency !== payment.currency) {
    return { kind: "refused", refusal: { code: "CURRENCY_MISMATCH", detail: `payment ${payment.paymentId} is in ${payment.currency}` } };
  }
  const amount = decimalToMinor(request.amountText, payment.currency, { field: "amount" });
  if (!amount.ok) return { kind: "refused", refusal: { code: "REQUEST_INVALID", detail: amount.error.message } };
  const amountMinor = amount.value;
  const refundableMinor = payment.amountMinor - payment.refundedMinor;
  if (amountMinor > refundableMinor) {
    return { kind: "refused", refusal: { code: "REFUND_EXCEEDS_PAYMENT", detail: `at most ${refundableMinor} minor units of payment ${payment.paymentId} remain refundable`, extensions: { refundable_minor: refundableMinor.toString() } } };
  }

  const transferKey = transferKeyOf(request.clientReference, "refund");
  const posted = await postTransfer(tx, {
    tenantId, transferKey, kind: "refund", valueDate: new Date().toISOString().slice(0, 10), sourceRef: `http:${payment.paymentId}`,
    legs: [
      { accountId: payment.creditorAccount, direction: "D", amountMinor: amountMinor, currency: payment.currency },
      { accountId: payment.debtorAccount, direction: "C", amountMinor: amountMinor, currency: payment.currency },
    ],
  });
  let status: Refund["status"] = "succeeded";
  if (!posted.ok) {
    if (posted.error.code !== "LEDGER_INSUFFICIENT_FUNDS") throw new Error(`unexpected ledger refusal ${posted.error.code}: ${posted.error.message}`);
    status = "declined";
  } else {
    assert(posted.value === "applied", `refund transfer ${transferKey} must be new, was ${posted.value}`);
    await tx.query("UPDATE payment SET refunded_minor = refunded_minor + $3 WHERE tenant_id = $1 AND payment_id = $2", [tenantId, payment.paymentId, amountMinor.toString()]);
  }
  const { rows } = await tx.query<RefundRow>(
    `INSERT INTO refund (tenant_id, refund_id, client_reference, payment_id, status, decline_code, amount_minor, currency, transfer_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${REFUND_COLUMNS}`,
    [tenantId, intentId("ref", tenantId, request.clientReference), request.clientReference, payment.paymentId, status,
      status === "declined" ? "insufficient_funds" : null, amountMinor.toString(), payment.currency, status === "succeeded" ? transferKey : null],
  );
  assert(rows[0], "insert returns the refund");
  const refund = toRefund(rows[0]);
  if (status === "declined") {
    return { kind: "refused", refusal: { code: "INSUFFICIENT_FUNDS", detail: `account ${payment.creditorAccount} cannot cover the refund`, extensions: { refund_id: refund.refundId } } };
  }
  return { kind: "created", refund };
}
