import { z } from "zod";
import { accountBody, paymentBody, refundBody } from "./schemas.ts";

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

/** The published contract, built from the same schemas that validate requests. */
export function openApiDocument(): Record<string, unknown> {
  const json = (schema: z.ZodType) => ({ "application/json": { schema: z.toJSONSchema(schema, { unrepresentable: "any" }) } });
  return {
    openapi: "3.1.0",
    info: { title: "clearline", version: "1", description: "Payments applied exactly once. Idempotency contract: docs/api/idempotency.md." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: {
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
      "/v1/accounts": {
        post: { summary: "Open an account (idempotent on its id; no Idempotency-Key needed)", requestBody: { required: true, content: json(accountBody) }, responses: { "201": { description: "created, or exists with the same kind and currency (the same answer)" }, ...problems({ "409": "exists with another kind or currency" }) } },
      },
      "/v1/accounts/{id}/balance": {
        get: { summary: "An account's balance (decimal string)", parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }], responses: { "200": { description: "{ account, currency, balance }" }, ...problems({ "404": "no such account" }) } },
      },
    },
  };
}
