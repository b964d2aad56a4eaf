// Codes of the operations API's reconciliation, outbox and incident routes (docs/decisions/0031).
export const opsErrorCodes = {
  OUTBOX_MESSAGE_NOT_DEAD: "Only a dead letter is retried: this message is pending, being delivered or delivered already; nothing was changed.",
} as const satisfies Record<string, string>;
