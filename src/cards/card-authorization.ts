import type { StoredHttpResponse } from "../idempotency/records.ts";

/**
 * A card authorization as the acquirer side asks for it: the contract between the route that
 * takes the request (POST /v1/card-authorizations, src/api/routes/card-authorizations.ts) and the
 * CardAuthorizer (card-authorizer.ts) that sends it to the card scheme as an ISO 8583 0100 over
 * the adapter's outbound link. The composition root hands the authorizer to the route.
 */
export const cardAuthorizationEndpoint = "POST /v1/card-authorizations";

export interface CardAuthorizationRequest {
  tenantId: string;
  idempotencyKey: string;
  pan: string;
  amountMinor: bigint;
  currency: string;
  terminal: string;     // DE 41, up to 8 characters
  merchant: string;     // DE 42, up to 15 characters
}

export type AuthorizeOutcome =
  | { kind: "answer"; response: StoredHttpResponse; replayed: boolean }
  | { kind: "key_reuse"; differing: string[] }
  | { kind: "in_progress" }
  | { kind: "scheme_unavailable" }
  | { kind: "scheme_busy" };

/** Sends an authorization to the scheme once per Idempotency-Key and always answers definitely (never "unknown"). */
export interface CardAuthorizationSender {
  authorize(request: CardAuthorizationRequest): Promise<AuthorizeOutcome>;
}
