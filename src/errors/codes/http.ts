// Codes of the HTTP API. The problem+json `code` a client sees is the catalog code in lower case
// (IDEMPOTENCY_KEY_REUSE -> "idempotency_key_reuse"); src/errors/problem.ts maps each to its status.
export const httpErrorCodes = {
  TENANT_NAME_INVALID: "A tenant name is 1 to 63 letters, digits, '.', '_' or '-'.",
  TENANT_EXISTS: "A tenant with this name exists already.",
  TENANT_UNKNOWN: "No tenant has this id or name.",
  UNAUTHORIZED: "The request carries no API key, or one that belongs to no tenant (Authorization: Bearer <key>).",
  API_KEY_SCOPE_FORBIDDEN: "The API key is valid but its scopes do not allow this route (a "
    + "read_only key reads; payments, files and operations each allow their own mutating routes); "
    + "nothing was done.",
  API_KEY_NAME_INVALID: "An API key name is 1 to 63 letters, digits, '.', '_' or '-'.",
  API_KEY_SCOPES_INVALID: "API key scopes are one or more of read_only, payments, files, "
    + "operations; read_only stands alone.",
  API_KEY_UNKNOWN: "No API key of this tenant has this id or prefix.",
  API_KEY_AMBIGUOUS: "More than one API key of this tenant has this prefix; name it by its id.",
  API_KEY_REVOKED: "The API key is revoked or its rotation's overlap window has ended; nothing "
    + "was changed.",
  API_KEY_ROTATED: "The API key was rotated already; rotate the key that replaced it, or revoke "
    + "this one.",
  API_KEY_OVERLAP_INVALID: "A rotation's overlap window is a duration from 0 to "
    + "limits.http.apiKeyOverlapMsMax (e.g. 0, 90s, 30m, 24h, 7d).",
  IDEMPOTENCY_KEY_MISSING: "A mutating request must carry an Idempotency-Key header; nothing was done.",
  IDEMPOTENCY_KEY_INVALID: "The Idempotency-Key is not 1 to 255 visible ASCII characters (a UUID is recommended).",
  IDEMPOTENCY_KEY_MULTIPLE: "The request carries more than one Idempotency-Key header.",
  IDEMPOTENCY_KEY_REUSE: "This Idempotency-Key was used with a different request; nothing was done and the earlier response is not returned.",
  REQUEST_IN_PROGRESS: "A request with this Idempotency-Key is still being processed; retry after Retry-After seconds with the same key.",
  REQUEST_TOO_LARGE: "The request body exceeds its route's size bound (HTTP 413); nothing was done. Big files go through SFTP or the drop folder.",
  REQUEST_INVALID: "The request body or query does not match the published contract; nothing was done.",
  REQUEST_BODY_UTF8_INVALID: "A JSON body holds bytes that are not UTF-8 (an overlong form, a surrogate, a sequence cut short); refused with the byte offset instead of being stored as replacement characters. Nothing was done.",
  REQUEST_BODY_KEY_DUPLICATE: "A JSON body names one member twice in an object (\"amount\":\"1.00\",\"amount\":\"5000.00\"): readers disagree on which counts, so it is refused naming the member and both byte offsets. Nothing was done.",
  REQUEST_BODY_TOO_DEEP: "A JSON body nests objects and arrays deeper than limits.http.jsonDepthMax levels; refused with the byte offset where it passes the bound. Nothing was done.",
  DUPLICATE_CLIENT_REFERENCE: "A payment or refund with this client_reference exists already; it was not posted again.",
  PAYMENT_ARRIVED_BY_OTHER_CHANNEL: "The client_reference is the end-to-end reference of a payment that arrived through another channel (a partner's file): it was not posted again; `natural_key` names that record (GET /v1/records/{key}).",
  PAYMENT_SAME_ACCOUNT: "A payment names one account as both debtor and creditor: it would move no money and post a debit and a credit on the same account. Refused (HTTP 422); nothing was claimed or posted.",
  INSUFFICIENT_FUNDS: "The debited account's available balance does not cover the amount; the payment was declined.",
  ACCOUNT_NOT_FOUND: "No account with this id exists for the tenant.",
  ACCOUNT_EXISTS_DIFFERENT: "An account with this id exists with another kind or currency.",
  CURRENCY_MISMATCH: "The amount's currency differs from an account's currency.",
  PAYMENT_NOT_FOUND: "No payment with this id or client_reference exists for the tenant.",
  PAYMENT_NOT_REFUNDABLE: "Only a succeeded payment can be refunded.",
  REFUND_EXCEEDS_PAYMENT: "The refunds of a payment would exceed its amount.",
  REFUND_NOT_FOUND: "No refund with this id exists for the tenant.",
  TRANSFER_NOT_FOUND: "No ledger transfer with this key exists for the tenant.",
  NOT_FOUND: "No such resource.",
  INTERNAL_ERROR: "An unexpected failure; nothing was stored for the request. The `retryable` member says whether the same request can succeed when sent again (a transient database conflict) or fails the same way (report it).",
  SERVICE_UNAVAILABLE: "The database does not answer; nothing was stored; retry with the same key "
    + "after Retry-After seconds.",
  OUTCOME_UNKNOWN: "The request's transaction was sent to COMMIT and the database's answer was "
    + "lost (a failover, a cut connection, a commit not confirmed on the synchronous standby in "
    + "time): it may have been stored, or not. Retry with the same Idempotency-Key after "
    + "Retry-After seconds: the retry replays the stored answer or runs it once "
    + "(docs/decisions/0078).",
} as const satisfies Record<string, string>;
