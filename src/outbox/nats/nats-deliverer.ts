import { limits } from "../../config/limits.ts";
import { OutboxPermanentError, type OutboxDeliverer } from "../deliverer.ts";
import { webhookBody } from "../webhooks/webhook-deliverer.ts";
import { eventSubject, type EventStream } from "./event-stream.ts";

export const NATS_DESTINATION = "nats";

/**
 * Delivers `nats` rows: a JetStream publish to `clearline.<tenant>.<event>` with Nats-Msg-Id =
 * the derived key, so the stream's duplicate window drops a republish (the relay died between
 * the publish ack and the mark). Delivered means the stream acknowledged it (stored).
 * The body is the same envelope as a webhook's (docs/decisions/0107).
 */
export function natsDeliverer(stream: EventStream): OutboxDeliverer {
  return {
    canDeliver: (destination) => destination === NATS_DESTINATION,
    async deliver(message, signal) {
      let subject: string;
      try {
        subject = eventSubject(message.tenantId, message.messageType);
      } catch (error) {
        throw new OutboxPermanentError("NATS_SUBJECT_INVALID", (error as Error).message);
      }
      signal.throwIfAborted();
      await stream.jetStream.publish(subject, webhookBody(message), { msgID: message.messageKey, timeout: limits.outbox.deliveryTimeoutMs });
    },
  };
}
