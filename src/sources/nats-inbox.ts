import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { applyPaymentRequest } from "../payments/payment-request.ts";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { findTenant } from "../tenants/tenants.ts";
import { STREAM_NAME, type EventStream } from "../outbox/nats/event-stream.ts";

/** The inbox's channel name in idempotency records: the source's Nats-Msg-Id is the key. */
export const NATS_INBOX_ENDPOINT = "inbox nats payment-requests";
export const INBOX_CONSUMER = "clearline-payment-requests";
export const INBOX_SUBJECT = "clearline.*.payment-requests";

export interface NatsInbox { stop(): Promise<void> }

/**
 * Payment instructions from `clearline.<tenant>.payment-requests`, through one durable consumer
 * shared by every serve process (JetStream hands each message to one of them). Each is applied
 * under the id its source gave it (Nats-Msg-Id), never the stream sequence, in the transaction of
 * its effect; a redelivery (ack lost, process killed) is answered from the stored outcome. The
 * message is acked after the commit; a refusal is an outcome too (acked), only an infrastructure
 * failure leaves it to be redelivered.
 */
export async function startNatsInbox(pool: Pool, stream: EventStream, logger: Logger): Promise<NatsInbox> {
  await stream.manager.consumers.add(STREAM_NAME, {
    durable_name: INBOX_CONSUMER, filter_subject: INBOX_SUBJECT, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All,
    ack_wait: limits.outbox.inboxAckWaitMs * 1_000_000, max_ack_pending: limits.outbox.inboxFetchMessagesMax,
  }).catch(async (error: unknown) => {
    // Already created by another process: that consumer serves.
    await stream.manager.consumers.info(STREAM_NAME, INBOX_CONSUMER).catch(() => { throw error; });
  });
  const consumer = await stream.jetStream.consumers.get(STREAM_NAME, INBOX_CONSUMER);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: limits.outbox.inboxFetchMessagesMax });
  const loop = (async () => {
    for await (const message of messages) await handle(pool, stream, message, logger);
  })();
  return {
    async stop() {
      await messages.close();
      await loop;
    },
  };
}

async function handle(pool: Pool, stream: EventStream, message: JsMsg, logger: Logger): Promise<void> {
  const tenantToken = message.subject.split(".")[1] ?? "";
  const tenant = await findTenant(pool, tenantToken);
  if (!tenant) {
    logger.warn({ subject: message.subject, seq: message.seq }, "payment request for an unknown tenant refused");
    message.term("unknown tenant");
    return;
  }
  const tenantId = tenant.tenantId;
  const messageId = message.headers?.get("Nats-Msg-Id") ?? "";
  if (messageId === "") {
    // No source id, nothing to dedup on: refused for good, never applied blind.
    logger.warn({ subject: message.subject, seq: message.seq }, "payment request without Nats-Msg-Id refused");
    message.term("no Nats-Msg-Id");
    return;
  }
  let body: unknown;
  try {
    body = message.json();
  } catch {
    body = undefined; // refused below as an invalid request, and stored under its id
  }
  try {
    const outcome = await applyPaymentRequest(pool, tenantId, NATS_INBOX_ENDPOINT, messageId, body);
    logger.info({ tenant: tenantId, messageId, status: outcome.status, replayed: outcome.replayed }, "payment request applied");
    // The outcome, told back under a key derived from the source's id: a redelivery republishes
    // the stored outcome, which the duplicate window drops.
    await stream.jetStream.publish(`clearline.${tenantToken}.payment-requests.outcome`, JSON.stringify({ messageId, status: outcome.status, replayed: outcome.replayed, body: parsedOrText(outcome.body) }), { msgID: `${messageId}:outcome` });
    message.ack();
  } catch (error) {
    logger.warn({ err: error, tenant: tenantId, messageId }, "payment request failed; JetStream redelivers it");
    message.nak(limits.outbox.backoffBaseMs);
  }
}

function parsedOrText(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
