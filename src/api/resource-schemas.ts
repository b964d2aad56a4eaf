/**
 * JSON Schemas of what the routes answer, for the OpenAPI document (docs/decisions/0035). They
 * document; they do not serialize (server.ts sends each answer's bytes as the route made them).
 */
export const paymentResource = {
  type: "object",
  properties: {
    id: { type: "string" }, client_reference: { type: "string" }, status: { type: "string", enum: ["succeeded", "declined", "in_progress"] },
    amount: { type: "string" }, currency: { type: "string" }, debtor_account: { type: "string" }, creditor_account: { type: "string" },
    description: { type: ["string", "null"] }, refunded_amount: { type: "string" }, decline_code: { type: ["string", "null"] }, created_at: { type: "string" },
  },
};

export const reviewItem = {
  type: "object",
  description: "A held conflict, suspect or late return, or a decided one",
  properties: {
    review_id: { type: "string" },
    reason: { type: "string", enum: ["conflict", "suspect", "late_return"] },
    state: { type: "string", enum: ["open", "released", "replaced", "applied_as_new", "refused"] },
    natural_key: { type: "string" }, file_id: { type: "string" }, record_index: { type: "integer" }, position: { type: ["string", "null"] },
    kind: { type: "string" }, amount_minor: { type: "string" }, currency: { type: "string" }, matched_ref: { type: ["string", "null"] },
    decision_reason: { type: ["string", "null"] }, operator: { type: ["string", "null"] }, decided_at: { type: ["string", "null"] },
    transfer_key: { type: ["string", "null"] }, compensation_key: { type: ["string", "null"] }, created_at: { type: "string" },
    detail: { type: ["string", "null"], description: "why it was held, as the ingest outcome says it" },
    matched_file: {
      type: ["object", "null"],
      description: "the other file whose record caused this item: an originator reusing a trace in another file shows its name and creation time (ACH header), so apply_as_new can be told from replace",
      properties: { file_id: { type: "string" }, name: { type: "string" }, created: { type: ["string", "null"] }, received_at: { type: "string" }, record_index: { type: "integer" } },
    },
  },
};

export const decidedReview = {
  type: "object",
  description: "The recorded decision (docs/decisions/0011): replace compensates original_transfer_key under compensation_key and posts posting_key; apply_as_new posts posting_key; refuse posts nothing",
  properties: {
    review_id: { type: "string" }, decision: { type: "string", enum: ["replace", "apply_as_new", "refuse"] },
    state: { type: "string", enum: ["replaced", "applied_as_new", "refused"] }, reason: { type: "string" }, operator: { type: "string" },
    decided_at: { type: "string" }, original_transfer_key: { type: ["string", "null"] }, compensation_key: { type: ["string", "null"] }, posting_key: { type: ["string", "null"] },
  },
};

export const statementResource = {
  type: "object",
  properties: {
    account: { type: "string" }, kind: { type: "string" }, currency: { type: "string" }, balance: { type: "string" }, truncated: { type: "boolean" },
    entries: { type: "array", items: { type: "object", properties: {
      entry_key: { type: "string" }, transfer_key: { type: "string" }, kind: { type: "string" },
      category: { type: "string", enum: ["technical_correction", "reconciliation_correction", "refund", "return", "posting"], description: "technical_correction: a review's or an incident's compensation or corrected posting; reconciliation_correction: a correction of a reconciliation difference; never a refund or a return" },
      origin: { type: ["string", "null"], description: "where the transfer came from: channel, file and position, request, or review:<id>" },
      direction: { type: "string", enum: ["debit", "credit"] }, amount: { type: "string" }, currency: { type: "string" }, value_date: { type: "string" },
      settlement_date: { type: "string" }, settlement_date_recorded: { type: "boolean" },
      created_at: { type: "string" },
    } } },
  },
};
