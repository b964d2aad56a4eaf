import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import type { OutboxDeliverer } from "./deliverer.ts";
import { natsDeliverer } from "./nats/nats-deliverer.ts";
import { openEventStream, type EventStream } from "./nats/event-stream.ts";
import { defaultRelaySettings, startRelay, type Relay } from "./relay.ts";
import type { WebhookSecretKeys } from "./webhooks/secret-box.ts";
import { webhookDeliverer } from "./webhooks/webhook-deliverer.ts";

export interface OutboxService {
  relay: Relay;
  eventStream: EventStream | undefined;
  stop(): Promise<void>;
}

/**
 * What `clearline serve` runs for outbound delivery: the relay with every deliverer this process
 * can serve (webhooks always; NATS when natsUrl is configured; partners' folders and SFTP
 * servers are added here by their module). A NATS server that cannot be reached at start stops
 * the start: events would pile up undelivered while the service looked healthy. The JetStream
 * inbox reads from the same stream; it is an input, so the composition root starts it
 * (src/sources/nats-inbox.ts) and stops it before this.
 */
export async function startOutbox(
  pool: Pool, options: { leaseMs: number; webhookKeys: WebhookSecretKeys; natsUrl?: string; extraDeliverers?: readonly OutboxDeliverer[] }, logger: Logger,
): Promise<OutboxService> {
  const eventStream = options.natsUrl ? await openEventStream(options.natsUrl) : undefined;
  const deliverers: OutboxDeliverer[] = [webhookDeliverer(pool, { keys: options.webhookKeys, logger }), ...(eventStream ? [natsDeliverer(eventStream)] : []), ...(options.extraDeliverers ?? [])];
  const settings = { ...defaultRelaySettings, leaseMs: options.leaseMs, deliveryTimeoutMs: Math.min(defaultRelaySettings.deliveryTimeoutMs, Math.floor(options.leaseMs / 2)) };
  const relay = startRelay(pool, deliverers, logger, settings);
  logger.info({ relayId: relay.relayId, nats: eventStream !== undefined }, "outbox relay started");
  return {
    relay,
    eventStream,
    async stop() {
      await relay.stop();
      await eventStream?.close();
    },
  };
}
