import type { ShownTransfer } from "../ledger/index.ts";
import type { Refund } from "../payments/payment.ts";
import type { FileRecordRow } from "../records/index.ts";
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

/** A ledger transfer with its legs, amounts as decimals of their currency. */
export function transferView(transfer: ShownTransfer): Record<string, unknown> {
  return {
    key: transfer.transferKey,
    kind: transfer.kind,
    value_date: transfer.valueDate,
    settlement_date: transfer.settlementDate,
    settlement_date_recorded: transfer.settlementDateRecorded,
    source_ref: transfer.sourceRef,
    created_at: transfer.createdAt,
    legs: transfer.legs.map((leg) => ({
      account: leg.accountId,
      direction: leg.direction === "D" ? "debit" : "credit",
      amount: minorToDecimal(leg.amountMinor, leg.currency),
      currency: leg.currency,
    })),
  };
}

/** One record of a file: its outcome, and the review and the original it points to. */
export function fileRecordView(fileId: string, row: FileRecordRow): Record<string, unknown> {
  return {
    file_id: fileId,
    index: row.index,
    position: row.position,
    natural_key: row.natural_key,
    outcome: row.outcome,
    code: row.code,
    detail: row.detail,
    kind: row.kind,
    amount_minor: row.amount_minor,
    currency: row.currency,
    original_ref: row.original_ref,
    transfer_key: row.transfer_key,
    review: row.review_id === null ? null : { id: row.review_id, state: row.review_state },
    original: row.original_key === null ? null : {
      natural_key: row.original_key, file_id: row.original_file_id,
      position: row.original_position,
    },
  };
}
