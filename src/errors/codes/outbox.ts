// Codes of the outbox, its webhooks and its JetStream events (src/outbox, `clearline outbox|webhook`).
export const outboxErrorCodes = {
  // `clearline outbox list|show|retry`: bad usage, nothing changed.
  OUTBOX_STATE_UNKNOWN: "--state names no outbox state (pending, delivering, delivered, dead, held).",
  OUTBOX_ID_INVALID: "An outbox row id is not a whole number of 1 to 18 digits.",
  OUTBOX_MESSAGE_UNKNOWN: "The tenant has no outbox row with this id.",
  OUTBOX_NOT_DEAD: "Only a dead letter can be retried: the row is pending, being delivered, delivered, or held for a disabled webhook endpoint (clearline webhook enable).",
  // `clearline webhook add`: bad usage, no endpoint added.
  WEBHOOK_URL_INVALID: "A webhook URL is not an http(s) URL.",
  WEBHOOK_EVENTS_INVALID: "--events names no event type, too many (limits.outbox.webhookEventTypesMax), or one that is not like payment.applied.",
  WEBHOOK_ENDPOINTS_FULL: "The tenant has as many webhook endpoints as limits.outbox.webhookEndpointsPerTenantMax allows.",
  WEBHOOK_ENDPOINT_UNKNOWN: "`clearline webhook enable`: the tenant has no webhook endpoint with this id.",
  // Deliveries that no retry can fix: the row is dead-lettered at once (last_error names the code).
  WEBHOOK_ENDPOINT_GONE: "The webhook endpoint was removed: the event is dead-lettered.",
  // A destination that takes nothing for now: the row is held, neither retried nor dead-lettered.
  WEBHOOK_ENDPOINT_DISABLED: "The webhook endpoint answered 410 Gone and was disabled (once, logged, shown by `clearline webhook list` and GET /v1/ops/webhooks): its undelivered events are held until `clearline webhook enable` makes them due again; events decided meanwhile are not written for it.",
  WEBHOOK_ENDPOINT_NOT_ACTIVE:
    "A test event goes only to an active endpoint: this one is disabled (enable it " +
    "first); nothing was sent.",
  WEBHOOK_BODY_TOO_LARGE: "A webhook body exceeds limits.outbox.webhookBodyBytesMax: the event is dead-lettered.",
  NATS_SUBJECT_INVALID: "The tenant id cannot be a NATS subject token (letters, digits, '_' and '-' only): the event is dead-lettered.",
} as const;

export type OutboxErrorCode = keyof typeof outboxErrorCodes;
