// Codes of operators, their sessions and four eyes (docs/decisions/0026).
export const operatorErrorCodes = {
  OPERATOR_NAME_INVALID: "An operator name is 1 to 63 letters, digits, '.', '_', '@' or '-'.",
  OPERATOR_ROLE_INVALID: "An operator's role is viewer, approver or admin.",
  OPERATOR_EXISTS: "The tenant has an operator with this name already.",
  OPERATOR_SIGN_IN_FAILED: "The tenant, operator name and secret do not match an operator; nothing says which of them was wrong.",
  OPERATOR_SESSION_MISSING: "The request carries no session cookie, or one that expired or was signed out; sign in again.",
  OPERATOR_CSRF_REFUSED: "A mutating request without the session's CSRF token (x-csrf-token header or csrf_token field); nothing was done.",
  OPERATOR_ROLE_FORBIDDEN: "The operator's role does not allow this; a viewer reads, an approver decides, an admin also sets the four-eyes amount.",
  FOUR_EYES_SELF_APPROVAL: "The operator who proposed a decision cannot approve it; another approver must.",
  FOUR_EYES_AMOUNT_INVALID: "The four-eyes amount is a non-negative whole number of minor units.",
  PROPOSAL_NOT_FOUND: "No open or decided proposal with this id exists for the tenant.",
  PROPOSAL_DECIDED: "The proposal was approved or cancelled already; nothing was done.",
  PROPOSAL_OPEN: "A proposal on this subject (review, suspense posting or difference) waits for a second approver; approve or cancel it before proposing again or deciding the subject another way. Nothing was done.",
  FOUR_EYES_PROPOSER_REQUIRED: "Above the tenant's four-eyes amount a decision through the API key or the CLI is a proposal, and a proposal names its proposer: give the operator (CLI: --operator NAME). Nothing was stored (docs/decisions/0035).",
  OPERATOR_SECRET_REQUIRED: "A CLI decision above the tenant's four-eyes amount (a proposal, its approval or its cancel) acts as the operator --operator names, and needs that operator's secret: CLEARLINE_OPERATOR_SECRET, or typed at the prompt on a terminal; never an argument. Nothing was stored (docs/decisions/0066).",
  FOUR_EYES_PROPOSER_UNKNOWN: "The operator named as proposer is no approver of the tenant (no such operator, or a viewer); nothing was stored (docs/decisions/0035).",
  SUSPENSE_POSTING_NOT_FOUND: "No record of the tenant was posted to suspense under this transfer key.",
  SUSPENSE_MOVED: "This suspense posting was moved out already, to another account; nothing was posted.",
  // The console's admin pages (docs/decisions/0106).
  OPERATOR_UNKNOWN: "The tenant has no operator with this id.",
  OPERATOR_DISABLED:
    "The operator was disabled already (by whom and why is on the operators page); " +
    "nothing changed.",
  OPERATOR_SELF_DISABLE:
    "An admin cannot disable their own operator: another admin must, so a tenant is " +
    "never left without an admin by a slip.",
  OPERATOR_REASON_MISSING:
    "Disabling an operator or rotating a secret needs a reason; nothing was done.",
  PROPOSAL_CONSOLE_ONLY:
    "An access grant's proposal (a new operator secret, a new webhook endpoint) is " +
    "approved by an admin in the console, which shows its secret once; the CLI and " +
    "/v1/ops do not. Nothing was done.",
  FOUR_EYES_APPROVER_NOT_ADMIN:
    "An access grant (a new operator secret, a new webhook endpoint) is approved by " +
    "an admin other than its proposer; an approver cannot. Nothing was done " +
    "(docs/decisions/0106).",
} as const satisfies Record<string, string>;
