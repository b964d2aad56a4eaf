import type { Pool } from "../../db/pool.ts";
import { limits } from "../../config/limits.ts";
import type { Logger } from "../../observability/logger.ts";
import { OutboxDestinationDisabled, OutboxPermanentError, type OutboxDeliverer, type OutboxMessage } from "../deliverer.ts";
import { eventEnvelope } from "../event-envelope.ts";
import type { WebhookSecretKeys } from "./secret-box.ts";
import { signWebhook } from "./signature.ts";
import { disableWebhookEndpoint, findWebhookTarget } from "./webhook-store.ts";

export const WEBHOOK_DESTINATION_PREFIX = "webhook:";

/**
 * The JSON body of an event: the versioned envelope (docs/decisions/0107), which keeps the
 * Standard Webhooks fields (type, timestamp, data).
 */
export function webhookBody(message: OutboxMessage): string {
  return JSON.stringify(eventEnvelope(message));
}

/**
 * Delivers `webhook:<endpoint id>` rows: a signed POST whose Webhook-Id is the row's derived key
 * (the same on every retry, so the receiver dedups on it). A 2xx is delivered; a removed endpoint
 * is permanent (dead letter); 410 Gone disables the endpoint, said once, and its events are held
 * (docs/decisions/0065); anything else is retried by the relay.
 */
export function webhookDeliverer(pool: Pool, options: { keys: WebhookSecretKeys; logger?: Logger }): OutboxDeliverer {
  return {
    canDeliver: (destination) => destination.startsWith(WEBHOOK_DESTINATION_PREFIX),
    async deliver(message, signal) {
      const endpointId = message.destination.slice(WEBHOOK_DESTINATION_PREFIX.length);
      const target = await findWebhookTarget(pool, message.tenantId, endpointId, options.keys);
      if (!target) throw new OutboxPermanentError("WEBHOOK_ENDPOINT_GONE", `webhook endpoint ${endpointId} of tenant ${message.tenantId} was removed`);
      if (target.disabledReason !== undefined) throw held(endpointId, target.disabledReason);
      const body = webhookBody(message);
      if (Buffer.byteLength(body) > limits.outbox.webhookBodyBytesMax) throw new OutboxPermanentError("WEBHOOK_BODY_TOO_LARGE", `body of ${Buffer.byteLength(body)} bytes exceeds ${limits.outbox.webhookBodyBytesMax}`);
      const timestampSeconds = Math.floor(Date.now() / 1000);
      const response = await fetch(target.url, {
        method: "POST",
        body,
        signal,
        headers: {
          "content-type": "application/json",
          "webhook-id": message.messageKey,
          "webhook-timestamp": String(timestampSeconds),
          "webhook-signature": signWebhook(target.signingSecret, message.messageKey, timestampSeconds, body),
        },
      });
      await response.arrayBuffer(); // drain, so the connection returns to the keep-alive pool
      if (response.status === 410) {
        const reason = `${target.url} answered 410 Gone`;
        const disabled = await disableWebhookEndpoint(pool, message.tenantId, endpointId, reason);
        if (disabled.disabledNow) {
          options.logger?.warn({ tenant: message.tenantId, endpointId, url: target.url, pendingHeld: disabled.held },
            "webhook endpoint disabled: it answered 410 Gone; its undelivered events are held until `clearline webhook enable`");
        }
        throw held(endpointId, reason);
      }
      if (response.status < 200 || response.status > 299) throw new Error(`${target.url} answered ${response.status}`);
    },
  };
}

function held(endpointId: string, reason: string): OutboxDestinationDisabled {
  return new OutboxDestinationDisabled("WEBHOOK_ENDPOINT_DISABLED", `held: endpoint ${endpointId} is disabled (${reason})`);
}
