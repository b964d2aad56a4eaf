import { paymentResource, reviewItem } from "./resource-schemas.ts";

/**
 * The items the HTTP API's lists hold (a list item and GET of the same resource by id have one
 * shape), with an example of each for the OpenAPI document. The schemas document; they do not
 * serialize (docs/decisions/0035).
 */
const text = { type: "string" };
const maybeText = { type: ["string", "null"] };

export const paymentItem = paymentResource;
export const paymentExample = {
  id: "pay_3f6c1d2e9a0b4c5d6e7f8a9b", client_reference: "order-1", status: "succeeded",
  amount: "10.00", currency: "USD", debtor_account: "alice", creditor_account: "bob",
  description: null, refunded_amount: "0.00", decline_code: null,
  created_at: "2026-12-05T14:00:00.000Z",
};

export const refundItem = {
  type: "object",
  properties: {
    id: text, client_reference: text, payment_id: text,
    status: { type: "string", enum: ["succeeded", "declined"] }, amount: text, currency: text,
    decline_code: maybeText, created_at: text,
  },
};
export const refundExample = {
  id: "ref_0a1b2c3d4e5f6a7b8c9d0e1f", client_reference: "refund-1",
  payment_id: "pay_3f6c1d2e9a0b4c5d6e7f8a9b", status: "succeeded", amount: "2.50",
  currency: "USD", decline_code: null, created_at: "2026-12-05T14:05:00.000Z",
};

const counts = { type: "object", additionalProperties: { type: "integer" } };
const findings = { type: "array", items: { type: "object" } };
export const fileItem = {
  type: "object",
  description: "A received file's report: its status and the count of each record outcome",
  properties: {
    file_id: text, name: text, format: maybeText,
    status: { type: "string", enum: ["received", "processing", "done", "rejected"] },
    records: { type: "integer" }, outcomes: counts, errors: findings, warnings: findings,
    partner: text, source: text, size_bytes: { type: "integer" }, received_at: text,
    identity: maybeText, correction_of: maybeText, same_bytes_as: maybeText,
    repeats_decided: { type: "integer" },
  },
};
export const fileExample = {
  file_id: "fil_0123456789abcdef0123", name: "original.ach", format: "ach", status: "done",
  records: 2,
  outcomes: { applied: 2, duplicate: 0, conflict: 0, suspect: 0, rejected: 0, orphan: 0 },
  errors: [], warnings: [], partner: "acme-bank", source: "sftp", size_bytes: 1880,
  received_at: "2026-12-05T14:00:00.000Z", identity: null, correction_of: null,
  same_bytes_as: null, repeats_decided: 0,
};

export const fileRecordItem = {
  type: "object",
  description: "One record of a file: where it was, its outcome, its review and its original",
  properties: {
    file_id: text, index: { type: "integer", description: "1 for the file's first record" },
    position: text, natural_key: maybeText,
    outcome: {
      type: "string", enum: ["applied", "duplicate", "conflict", "suspect", "rejected", "orphan"],
    },
    code: maybeText, detail: maybeText, kind: maybeText, amount_minor: maybeText,
    currency: maybeText, original_ref: maybeText, transfer_key: maybeText,
    review: { type: ["object", "null"], properties: { id: text, state: maybeText } },
    original: {
      type: ["object", "null"],
      description: "the arrival that first claimed the key this record repeats or conflicts with",
      properties: { natural_key: text, file_id: maybeText, position: maybeText },
    },
  },
};
export const fileRecordExample = {
  file_id: "fil_0123456789abcdef0123", index: 2, position: "line 4",
  natural_key: "ach:09100001:0000002:1234567890:PPD:261205", outcome: "applied", code: null,
  detail: null, kind: "credit", amount_minor: "20000", currency: "USD", original_ref: null,
  transfer_key: "ach:09100001:0000002:1234567890:PPD:261205", review: null, original: null,
};

export { reviewItem };
export const reviewExample = {
  review_id: "rev_5a6b7c8d9e0f", reason: "conflict", state: "open",
  natural_key: "ach:09100001:0000002:1234567890:PPD:261205", file_id: "fil_0123456789abcdef0123",
  record_index: 2, position: "line 4", kind: "credit", amount_minor: "20500", currency: "USD",
  matched_ref: null, decision_reason: null, operator: null, decided_at: null, transfer_key: null,
  compensation_key: null, created_at: "2026-12-05T14:10:00.000Z",
  detail: "the key was applied with other content", matched_file: null,
};

export const transferItem = {
  type: "object",
  description: "A ledger transfer and its legs (append-only: it never changes)",
  properties: {
    key: text, kind: text, value_date: text, settlement_date: text,
    settlement_date_recorded: { type: "boolean" }, source_ref: maybeText, created_at: text,
    legs: { type: "array", items: { type: "object", properties: {
      account: text, direction: { type: "string", enum: ["debit", "credit"] }, amount: text,
      currency: text,
    } } },
  },
};
export const transferExample = {
  key: "api:order-1:debit", kind: "payment", value_date: "2026-12-05",
  settlement_date: "2026-12-05", settlement_date_recorded: true,
  source_ref: "http:pay_3f6c1d2e9a0b4c5d6e7f8a9b", created_at: "2026-12-05T14:00:00.000000Z",
  legs: [
    { account: "alice", direction: "debit", amount: "10.00", currency: "USD" },
    { account: "bob", direction: "credit", amount: "10.00", currency: "USD" },
  ],
};

export const differenceItem = {
  type: "object",
  description: "A difference a reconciliation run found between their side and ours",
  properties: {
    difference_id: text, account_id: text,
    reason: { type: "string", enum: ["theirs_only", "ours_only", "amount_differs",
      "date_outside_window", "duplicate_on_their_side", "foreign_currency"] },
    state: { type: "string", enum: ["open", "corrected", "explained", "resolved"] },
    item_keys: { type: "array", items: text }, transfer_keys: { type: "array", items: text },
    delta_minor: { type: "string", description: "theirs minus ours, in minor units" },
    currency: text, decided_by: maybeText, decision_reason: maybeText,
    correction_key: maybeText, first_seen_at: text,
  },
};
export const differenceExample = {
  difference_id: "dif_1a2b3c4d5e6f", account_id: "settlement-usd", reason: "theirs_only",
  state: "open", item_keys: ["camt053:STMT-1:3"], transfer_keys: [], delta_minor: "1200",
  currency: "USD", decided_by: null, decision_reason: null, correction_key: null,
  first_seen_at: "2026-12-05T15:00:00.000Z",
};
