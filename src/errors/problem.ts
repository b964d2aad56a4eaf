import type { ErrorCode } from "./catalog.ts";
import { errorCatalog } from "./catalog.ts";

/**
 * The one place that maps error codes to HTTP statuses. Anything not listed is a 400 (bad
 * input); an unexpected failure is a 500 and an unreachable database a 503.
 */
const statusByCode: Partial<Record<ErrorCode, number>> = {
  UNAUTHORIZED: 401,
  API_KEY_SCOPE_FORBIDDEN: 403,
  IDEMPOTENCY_KEY_REUSE: 422,
  REQUEST_IN_PROGRESS: 409,
  DUPLICATE_CLIENT_REFERENCE: 409,
  PAYMENT_ARRIVED_BY_OTHER_CHANNEL: 409,
  RECORD_NOT_FOUND: 404,
  ACCOUNT_EXISTS_DIFFERENT: 409,
  INSUFFICIENT_FUNDS: 422,
  PAYMENT_SAME_ACCOUNT: 422,
  CURRENCY_MISMATCH: 422,
  PAYMENT_NOT_REFUNDABLE: 422,
  REFUND_EXCEEDS_PAYMENT: 422,
  ACCOUNT_NOT_FOUND: 404,
  PARTNER_NOT_FOUND: 404,
  PAYMENT_NOT_FOUND: 404,
  NOT_FOUND: 404,
  REFUND_NOT_FOUND: 404,
  TRANSFER_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  FILE_RECORD_NOT_FOUND: 404,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  OUTCOME_UNKNOWN: 503,     // may have been stored: the retry with the same key finds out (0078)
  ISO8583_SCHEME_UNAVAILABLE: 503,   // nothing sent, nothing stored: retry with the same key
  ISO8583_SCHEME_BUSY: 503,
  CURRENCY_UNKNOWN: 400,
  LEDGER_ACCOUNT_UNKNOWN: 404,
  RECON_RUN_UNKNOWN: 404,
  RECON_DIFFERENCE_UNKNOWN: 404,
  RECON_DIFFERENCE_DECIDED: 409,
  RECON_DIFFERENCE_NOT_CORRECTABLE: 422,
  RECON_ACCOUNT_NOT_RECONCILABLE: 422,
  RECON_CURRENCY_MISMATCH: 422,
  RECON_BALANCE_MISMATCH: 422,
  RECON_RUN_TOO_LARGE: 422,
  RECON_RUN_LEFTOVERS_TOO_MANY: 422,
  RECON_FILE_CHANGED: 409,
  LEDGER_INSUFFICIENT_FUNDS: 422,
  REVIEW_NOT_FOUND: 404,
  REVIEW_DECIDED: 409,
  REVIEW_INSUFFICIENT_FUNDS: 422,
  REVIEW_NOT_APPLICABLE: 422,
  TEXT_CHARACTER_INVALID: 422,
  REQUEST_TOO_LARGE: 413,
  OPERATOR_SIGN_IN_FAILED: 401,
  OPERATOR_SESSION_MISSING: 401,
  OPERATOR_CSRF_REFUSED: 403,
  OPERATOR_ROLE_FORBIDDEN: 403,
  FOUR_EYES_SELF_APPROVAL: 403,
  PROPOSAL_NOT_FOUND: 404,
  PROPOSAL_DECIDED: 409,
  PROPOSAL_OPEN: 409,
  OPERATOR_EXISTS: 409,
  INCIDENT_UNKNOWN: 404,
  FOUR_EYES_PROPOSER_REQUIRED: 400,
  FOUR_EYES_PROPOSER_UNKNOWN: 422,
  OUTBOX_MESSAGE_UNKNOWN: 404,
  OUTBOX_MESSAGE_NOT_DEAD: 409,
  SUSPENSE_POSTING_NOT_FOUND: 404,
  OPERATOR_UNKNOWN: 404,
  OPERATOR_DISABLED: 409,
  OPERATOR_SELF_DISABLE: 422,
  FOUR_EYES_APPROVER_NOT_ADMIN: 403,
  PROPOSAL_CONSOLE_ONLY: 422,
  WEBHOOK_ENDPOINT_UNKNOWN: 404,
  WEBHOOK_ENDPOINT_NOT_ACTIVE: 409,
  SUSPENSE_MOVED: 409,      // well-formed JSON whose text cannot be stored: unprocessable, not malformed
};

export function httpStatusOf(code: ErrorCode): number {
  return statusByCode[code] ?? 400;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;       // stable, lower case: "idempotency_key_reuse"
  detail: string;
  [extension: string]: unknown;
}

/** RFC 9457 problem details with the catalog code. */
export function problem(code: ErrorCode, detail: string, extensions: Record<string, unknown> = {}): Problem {
  const status = httpStatusOf(code);
  return {
    type: `https://clearline.dev/errors/${code.toLowerCase()}`,
    title: errorCatalog[code],
    status,
    code: code.toLowerCase(),
    detail,
    ...extensions,
  };
}
