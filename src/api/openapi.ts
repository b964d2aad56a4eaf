import { z } from "zod";
import { limits } from "../config/limits.ts";
import { operationsPaths } from "./openapi-operations.ts";
import { paymentBody } from "../payments/payment-request.ts";
import { accountBody, reconDecisionBody, reconRunBody, refundBody, reviewDecisionBody } from "./schemas.ts";

const problemSchema = {
  type: "object",
  description: "RFC 9457 problem details; `code` is stable (see docs/errors.md)",
  properties: { type: { type: "string" }, title: { type: "string" }, status: { type: "integer" }, code: { type: "string" }, detail: { type: "string" } },
  required: ["type", "title", "status", "code", "detail"],
};

const idempotencyKey = {
  name: "Idempotency-Key", in: "header", required: true,
  description: "1 to 255 visible ASCII characters (a UUID v4 is recommended), scoped to tenant + endpoint. A repeat with the same key and the same body returns the stored response with `Idempotent-Replayed: true` for 7 days. See docs/api/idempotency.md.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

const problems = (statuses: Record<string, string>) => Object.fromEntries(
  Object.entries(statuses).map(([status, description]) => [status, { description, content: { "application/problem+json": { schema: problemSchema } } }]),
);

const paymentResource = {
  type: "object",
  properties: {
    id: { type: "string" }, client_reference: { type: "string" }, status: { type: "string", enum: ["succeeded", "declined", "in_progress"] },
    amount: { type: "string" }, currency: { type: "string" }, debtor_account: { type: "string" }, creditor_account: { type: "string" },
    description: { type: ["string", "null"] }, refunded_amount: { type: "string" }, decline_code: { type: ["string", "null"] }, created_at: { type: "string" },
  },
};

const reviewItem = {
  type: "object",
  description: "A held conflict or suspect, or a decided one",
  properties: {
    review_id: { type: "string" }, reason: { type: "string", enum: ["conflict", "suspect"] },
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

const decidedReview = {
  type: "object",
  description: "The recorded decision (docs/decisions/0011): replace compensates original_transfer_key under compensation_key and posts posting_key; apply_as_new posts posting_key; refuse posts nothing",
  properties: {
    review_id: { type: "string" }, decision: { type: "string", enum: ["replace", "apply_as_new", "refuse"] },
    state: { type: "string", enum: ["replaced", "applied_as_new", "refused"] }, reason: { type: "string" }, operator: { type: "string" },
    decided_at: { type: "string" }, original_transfer_key: { type: ["string", "null"] }, compensation_key: { type: ["string", "null"] }, posting_key: { type: ["string", "null"] },
  },
};

const statementResource = {
  type: "object",
  properties: {
    account: { type: "string" }, kind: { type: "string" }, currency: { type: "string" }, balance: { type: "string" }, truncated: { type: "boolean" },
    entries: { type: "array", items: { type: "object", properties: {
      entry_key: { type: "string" }, transfer_key: { type: "string" }, kind: { type: "string" },
      category: { type: "string", enum: ["technical_correction", "reconciliation_correction", "refund", "return", "posting"], description: "technical_correction: a review's or an incident's compensation or corrected posting; reconciliation_correction: a correction of a reconciliation difference; never a refund or a return" },
      origin: { type: ["string", "null"], description: "where the transfer came from: channel, file and position, request, or review:<id>" },
      direction: { type: "string", enum: ["debit", "credit"] }, amount: { type: "string" }, currency: { type: "string" }, value_date: { type: "string" }, created_at: { type: "string" },
    } } },
  },
};

/** The published contract, built from the same schemas that validate requests. */
export function openApiDocument(): Record<string, unknown> {
  const json = (schema: z.ZodType) => ({ "application/json": { schema: z.toJSONSchema(schema, { unrepresentable: "any" }) } });
  return {
    openapi: "3.1.0",
    info: { title: "clearline", version: "1", description: "Payments applied exactly once. Idempotency contract: docs/api/idempotency.md." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" }, session: { type: "apiKey", in: "cookie", name: "clearline_session" } } },
    security: [{ bearer: [] }],
    paths: {
      ...paymentPaths(json),
      "/v1/accounts": {
        post: { summary: "Open an account (idempotent on its id; no Idempotency-Key needed)", requestBody: { required: true, content: json(accountBody) }, responses: { "201": { description: "created, or exists with the same kind and currency (the same answer)" }, ...problems({ "409": "exists with another kind or currency" }) } },
      },
      ...reconciliationPaths(json),
      ...operationsPaths(json),
      ...ledgerAndReviewPaths(json),
    },
  };
}

/** Payments, refunds and card authorizations: each POST idempotent under its Idempotency-Key. */
function paymentPaths(json: (schema: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  return {
    "/v1/payments": {
      post: {
        summary: "Create a payment (idempotent)",
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json(paymentBody) },
        responses: {
          "201": { description: "created, or replayed with Idempotent-Replayed: true", content: { "application/json": { schema: paymentResource } } },
          ...problems({ "400": "invalid request or Idempotency-Key (not stored; fix and resend)", "401": "no or unknown API key", "404": "account not found (stored)", "409": "request_in_progress (retry with the same key after Retry-After) or duplicate_client_reference (stored)", "422": "idempotency_key_reuse, insufficient_funds (stored), currency_mismatch or text_character_invalid (a NUL or unpaired surrogate; not stored)", "500": "nothing stored; retry with the same key only when the problem says retryable: true", "503": "nothing stored; retry with the same key" }),
        },
      },
      get: {
        summary: "Status of a payment intent by client_reference, including one in progress",
        parameters: [{ name: "client_reference", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the payment, or { status: in_progress }", content: { "application/json": { schema: paymentResource } } }, ...problems({ "404": "no such intent" }) },
      },
    },
    "/v1/payments/{id}": {
      get: { summary: "A payment", parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }], responses: { "200": { description: "the payment", content: { "application/json": { schema: paymentResource } } }, ...problems({ "404": "no such payment" }) } },
    },
    "/v1/refunds": {
      post: {
        summary: "Refund part or all of a payment (idempotent)",
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json(refundBody) },
        responses: { "201": { description: "created, or replayed" }, ...problems({ "400": "invalid", "404": "payment not found (stored)", "409": "in progress or duplicate_client_reference", "422": "refund_exceeds_payment, payment_not_refundable, insufficient_funds or idempotency_key_reuse" }) },
      },
    },
    "/v1/card-authorizations": {
      post: {
        summary: "Authorize a card payment with the card scheme (ISO 8583 0100), idempotent; a timeout becomes a reversal, never an unknown",
        parameters: [idempotencyKey],
        requestBody: { required: true, content: { "application/json": { schema: {
          type: "object", additionalProperties: false, required: ["card", "amount", "currency", "terminal", "merchant"],
          properties: { card: { type: "string", description: "PAN, 12 to 19 digits; never stored or echoed in clear" }, amount: { type: "string" }, currency: { type: "string" }, terminal: { type: "string", maxLength: 8 }, merchant: { type: "string", maxLength: 15 } },
        } } } },
        responses: {
          "201": { description: "{ status: approved | declined | reversed, ... }, or replayed with Idempotent-Replayed: true" },
          ...problems({ "400": "invalid request or Idempotency-Key (not stored)", "409": "request_in_progress", "422": "idempotency_key_reuse", "503": "iso8583_scheme_unavailable or iso8583_scheme_busy: nothing sent, nothing stored; retry with the same key" }),
        },
      },
    },
  };
}

/** Statements, balances and the held records of the record core with their decisions. */
function ledgerAndReviewPaths(json: (schema: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  return {
    "/v1/accounts/{id}/statement": {
      get: {
        summary: "An account's latest entries, oldest first, with transfer key, kind, category and origin",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }, { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: limits.ledger.statementEntriesMax } }],
        responses: { "200": { description: "the statement", content: { "application/json": { schema: statementResource } } }, ...problems({ "400": "invalid limit", "404": "no such account" }) },
      },
    },
    "/v1/reviews": {
      get: {
        summary: "Held records of the API key's tenant (conflicts, suspects), open by default",
        parameters: [{ name: "state", in: "query", required: false, schema: { type: "string", enum: ["open", "released", "replaced", "applied_as_new", "refused", "all"], default: "open" } }],
        responses: { "200": { description: "{ reviews: [...] }, oldest first", content: { "application/json": { schema: { type: "object", properties: { reviews: { type: "array", items: reviewItem } } } } } }, ...problems({ "400": "unknown state" }) },
      },
    },
    "/v1/reviews/{id}/decision": {
      post: {
        summary: "Decide a held record: replace, apply_as_new or refuse (idempotent; one decision per review, for ever)",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }, idempotencyKey],
        requestBody: { required: true, content: json(reviewDecisionBody) },
        responses: {
          "200": { description: "the decision (a repeat of the same decision answers the stored one; a replayed key adds Idempotent-Replayed: true)", content: { "application/json": { schema: decidedReview } } },
          ...problems({ "400": "invalid request or Idempotency-Key (not stored)", "404": "ingest_review_not_found (stored)", "409": "ingest_review_decided: another decision was recorded first (named); or request_in_progress", "422": "ingest_review_insufficient_funds or ingest_review_not_applicable (stored; nothing posted, the review stays open), or idempotency_key_reuse" }),
        },
      },
    },
    "/v1/records/{key}": {
      get: {
        summary: "One payment's history across channels: every arrival of the natural key (or of the payment identity e2e:<reference>) by file, HTTP or ISO 8583, the decision on each, the review decisions and the ledger transfers, in time order",
        parameters: [{ name: "key", in: "path", required: true, schema: { type: "string" }, description: "a natural key (api:<client_reference>, ach:..., iso20022:..., iso8583:...) or a payment identity e2e:<reference>" }],
        responses: {
          "200": { description: "{ key, identity_key, records: [...], events: [...] (arrival, held, decision; oldest first), transfers: [...] }", content: { "application/json": { schema: { type: "object", required: ["key", "records", "events", "transfers"], properties: { key: { type: "string" }, identity_key: { type: ["string", "null"] }, records: { type: "array", items: { type: "object" } }, events: { type: "array", items: { type: "object" } }, transfers: { type: "array", items: { type: "object" } } } } } } },
          ...problems({ "404": "record_not_found" }),
        },
      },
    },
    "/v1/accounts/{id}/balance": {
      get: { summary: "An account's balance (decimal string)", parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }], responses: { "200": { description: "{ account, currency, balance }" }, ...problems({ "404": "no such account" }) } },
    },
  };
}

const idParameter = { name: "id", in: "path", required: true, schema: { type: "string" } };

/** /v1/reconciliations: idempotent by nature (imports by content, runs by inputs, corrections by difference). */
function reconciliationPaths(json: (schema: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  return {
    "/v1/reconciliations/imports": {
      post: {
        summary: "Import their side for a settlement account: camt.053, camt.054 or CSV (id,date,amount,currency,reference,description) as the raw body; the same bytes again change nothing",
        parameters: [{ name: "account", in: "query", required: true, schema: { type: "string" } }, { name: "format", in: "query", schema: { type: "string", enum: ["camt053", "camt054", "ach", "csv"] } }, { name: "name", in: "query", schema: { type: "string" } }],
        requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
        responses: { "201": { description: "imported: items, seen before, listed twice" }, "200": { description: "the same bytes were imported before" }, ...problems({ "400": "unreadable file, with every finding and its position", "404": "no such account", "422": "not a settlement account, another currency, or a closing balance that does not add up" }) },
      },
    },
    "/v1/reconciliations/runs": {
      post: {
        summary: "Reconcile one settlement account over a period; the same inputs give the same run",
        requestBody: { required: true, content: json(reconRunBody) },
        responses: { "201": { description: "{ run_id, matched, differences: { theirs_only, ours_only, amount_differs, date_outside_window, duplicate_on_their_side, pending } }" }, "200": { description: "a dry run, or the same inputs as an earlier run (that run)" }, ...problems({ "400": "bad period", "404": "no such account", "422": "not a settlement account, or too many items for one run" }) },
      },
    },
    "/v1/reconciliations/runs/{id}": {
      get: { summary: "A run: differences (theirs_only first) and matches, each with its reason or rule", parameters: [idParameter], responses: { "200": { description: "the run" }, ...problems({ "404": "no such run" }) } },
    },
    "/v1/reconciliations/differences": {
      get: { summary: "Open differences, theirs_only first, then the oldest", parameters: [{ name: "account", in: "query", schema: { type: "string" } }], responses: { "200": { description: "{ differences }" } } },
    },
    "/v1/reconciliations/differences/{id}/correct": {
      post: { summary: "Post the correction the difference calls for (transfer recon:<difference id>, settlement against recon suspense); once, however often asked", parameters: [idParameter], requestBody: { required: true, content: json(reconDecisionBody) }, responses: { "200": { description: "the difference, corrected" }, ...problems({ "404": "no such difference", "409": "already explained", "422": "moves no money: explain it" }) } },
    },
    "/v1/reconciliations/differences/{id}/explain": {
      post: { summary: "Close the difference as explained, with a reason; no money moves", parameters: [idParameter], requestBody: { required: true, content: json(reconDecisionBody) }, responses: { "200": { description: "the difference, explained" }, ...problems({ "404": "no such difference", "409": "already corrected" }) } },
    },
  };
}
