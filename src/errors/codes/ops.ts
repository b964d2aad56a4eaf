// Codes of the operations API's reconciliation, outbox and incident routes (issue 14, docs/decisions/0031).
export const opsErrorCodes = {
  RECON_CORRECTION_NEEDS_SECOND_APPROVER: "A correction above the tenant's four-eyes amount is not taken from one operator in the console; nothing was posted (docs/decisions/0031).",
  OUTBOX_MESSAGE_NOT_DEAD: "Only a dead letter is retried: this message is pending, being delivered or delivered already; nothing was changed.",
} as const satisfies Record<string, string>;
