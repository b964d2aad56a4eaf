import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { cardAuthorizationEndpoint, isPanWellFormed, type CardAuthorizationSender } from "../../cards/index.ts";
import { currencyByCode, decimalToMinor } from "../../protocols/iso4217/currency.ts";
import { maskPan } from "../../protocols/iso8583/index.ts";
import { send, tenantOf } from "../http-context.ts";
import { idempotencyKeyOf } from "../../requests/idempotent-request.ts";
import { problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { routeSchema } from "../route-schema.ts";

/**
 * POST /v1/card-authorizations: an authorization sent to the card scheme as an ISO 8583 0100.
 * Answers 201 with status approved, declined or reversed (the scheme did not answer in time, so
 * the authorization was reversed); never "unknown". The card number is used for the message and
 * forgotten: the response and every stored row show its BIN and last four only.
 */
const printable = /^[\x20-\x7e]+$/;
export const cardAuthorizationBody = z.object({
  card: z.string().describe("PAN, 12 to 19 digits; never stored or echoed in clear"),
  amount: z.string().max(40),
  currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 alphabetic code"),
  terminal: z.string().min(1).max(8).regex(printable, "printable ASCII"),   // DE 41
  merchant: z.string().min(1).max(15).regex(printable, "printable ASCII"),  // DE 42
}).strict();

const authorizationSchema = routeSchema({
  operationId: "authorizeCardPayment",
  summary: "Authorize a card payment with the card scheme (ISO 8583 0100), idempotent; a timeout becomes a reversal, never an unknown", tags: ["cards"], auth: "api_key",
  body: cardAuthorizationBody, idempotencyKey: true,
  ok: { 201: "{ status: approved | declined | reversed, ... }, or replayed with Idempotent-Replayed: true" },
  problems: { 400: "iso8583_card_authorization_invalid, currency_unknown or an invalid Idempotency-Key (not stored)", 409: "request_in_progress", 422: "idempotency_key_reuse", 503: "iso8583_scheme_unavailable or iso8583_scheme_busy: nothing sent, nothing stored; retry with the same key" },
});

export function registerCardAuthorizationRoutes(app: FastifyInstance, deps: { authorizer: CardAuthorizationSender }): void {
  app.post("/v1/card-authorizations", { schema: authorizationSchema }, async (request, reply) => {
    const tenant = tenantOf(request);
    const key = idempotencyKeyOf(cardAuthorizationEndpoint, request.headers["idempotency-key"]);
    if (!key.ok) return send(reply, problemReply(key.code, key.message));
    const body = cardAuthorizationBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("ISO8583_CARD_AUTHORIZATION_INVALID", "the card authorization request is invalid", { errors: describeIssues(body.error) }));
    const { card, currency, terminal, merchant } = body.data;
    if (!isPanWellFormed(card)) {
      return send(reply, problemReply("ISO8583_CARD_AUTHORIZATION_INVALID", `card ${maskPan(card.replace(/\D/g, ""))} is not 12 to 19 digits`, { errors: [{ field: "card", message: "12 to 19 digits" }] }));
    }
    if (currencyByCode(currency) === undefined) return send(reply, problemReply("CURRENCY_UNKNOWN", `unknown currency ${currency}`));
    const amount = decimalToMinor(body.data.amount, currency, { field: "amount" });
    if (!amount.ok) return send(reply, problemReply("ISO8583_CARD_AUTHORIZATION_INVALID", amount.error.message, { errors: [{ field: "amount", message: amount.error.message }] }));
    if (amount.value <= 0n || amount.value > 999_999_999_999n) {
      return send(reply, problemReply("ISO8583_CARD_AUTHORIZATION_INVALID", "the amount must be greater than zero and fit DE 4 (12 digits)", { errors: [{ field: "amount", message: "out of range" }] }));
    }

    const outcome = await deps.authorizer.authorize({
      tenantId: tenant.tenantId, idempotencyKey: key.key, pan: card, amountMinor: amount.value, currency, terminal, merchant,
    });
    switch (outcome.kind) {
      case "answer":
        return send(reply, {
          status: outcome.response.status, body: outcome.response.body, effectRef: outcome.response.effectRef,
          contentType: "application/json; charset=utf-8", replayed: outcome.replayed,
        });
      case "key_reuse":
        return send(reply, {
          ...problemReply("IDEMPOTENCY_KEY_REUSE", `this Idempotency-Key was first used with a different request (${outcome.differing.join(", ")} differ)`, { differing_fields: outcome.differing }),
          replayed: false,
        });
      case "in_progress":
        return send(reply, { ...problemReply("REQUEST_IN_PROGRESS", "an authorization with this Idempotency-Key is being processed; retry with the same key"), replayed: false, retryAfterSeconds: 1 });
      case "scheme_unavailable":
        return send(reply, problemReply("ISO8583_SCHEME_UNAVAILABLE", "no signed-on scheme connection; nothing was sent"));
      case "scheme_busy":
        return send(reply, { ...problemReply("ISO8583_SCHEME_BUSY", "every in-flight slot of the scheme connection is taken; retry with the same key"), replayed: false, retryAfterSeconds: 1 });
    }
  });
}
