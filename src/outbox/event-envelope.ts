import type { OutboxMessage } from "./deliverer.ts";

/** The version of the event data this release writes (docs/decisions/0107). */
export const EVENT_VERSION = 1;

/**
 * What every event says, on a webhook and on NATS alike (docs/decisions/0107, docs/webhooks.md).
 * `event_id` is the event's key (the Webhook-Id and the Nats-Msg-Id), the same on every retry;
 * `data` is the object in the shape the HTTP API answers with (version 1), or, for an event
 * stored before version 1 and sent now, as it was stored (version 0). `type` and `timestamp` are
 * the Standard Webhooks names of `event_type` and `occurred_at`, kept for receivers routing on
 * them.
 */
export interface EventEnvelope {
  event_id: string;
  event_type: string;
  event_version: 0 | 1;
  occurred_at: string;
  tenant_id: string;
  type: string;
  timestamp: string;
  data: unknown;
}

/**
 * The version of a stored payload. Every event written before version 1 (payment.applied,
 * file.processed, record.conflict, record.suspect, recon.difference, authorization.reversed)
 * named its top-level fields in camelCase (paymentId, fileId, reviewId, differenceId,
 * idempotencyKey), and version 1 names every field in snake_case (a test holds each view to it),
 * so the payload itself tells them apart: no column, no migration, and a process of the
 * release before this one can still deliver what this one writes and the other way round.
 */
export function storedEventVersion(payload: unknown): 0 | 1 {
  const isObject = payload !== null && typeof payload === "object" && !Array.isArray(payload);
  if (!isObject) return EVENT_VERSION;
  return Object.keys(payload).some((key) => /[A-Z]/.test(key)) ? 0 : EVENT_VERSION;
}

/** The envelope of a leased event row: its data as stored, its version read from that data. */
export function eventEnvelope(message: OutboxMessage): EventEnvelope {
  const occurredAt = message.createdAt.toISOString();
  return {
    event_id: message.messageKey,
    event_type: message.messageType,
    event_version: storedEventVersion(message.payload),
    occurred_at: occurredAt,
    tenant_id: message.tenantId,
    type: message.messageType,
    timestamp: occurredAt,
    data: message.payload,
  };
}
