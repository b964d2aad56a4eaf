import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { withTransaction } from "../src/db/transaction.ts";
import { createLogger } from "../src/observability/logger.ts";
import type { OutboxDeliverer } from "../src/outbox/deliverer.ts";
import { openEventStream } from "../src/outbox/nats/event-stream.ts";
import { natsDeliverer } from "../src/outbox/nats/nats-deliverer.ts";
import { enqueueEvents } from "../src/outbox/outbox-store.ts";
import { defaultRelaySettings, relayUntilIdle } from "../src/outbox/relay.ts";
import { newSigningSecret, signWebhook } from "../src/outbox/webhooks/signature.ts";
import { webhookDeliverer } from "../src/outbox/webhooks/webhook-deliverer.ts";
import { addWebhookEndpoint } from "../src/outbox/webhooks/webhook-store.ts";
import { alternate, roundsRow, throughput, type BenchReport } from "./harness.ts";
import { benchDatabase, type BenchDatabase } from "./support/database.ts";
import { testWebhookKeys } from "../test/support/outbox.ts";

const webhookKeys = testWebhookKeys();

const DEFAULT_MESSAGES = 2_000;
const ROUNDS = 3;
const NATS_URL = process.env.CLEARLINE_NATS_URL ?? "nats://127.0.0.1:4222";

const payloadOf = (i: number) => ({ paymentId: `pay_${i}`, clientReference: `ref-${i}`, amountMinor: String(1_000 + i), currency: "USD", status: "succeeded" });

/** A local webhook receiver that answers 204 to every POST (the cost of a receiver's own work left out). */
async function sinkReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => { request.resume(); request.on("end", () => response.writeHead(204).end()); });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/** Relays `count` enqueued events (written before the clock starts) until none is left; events/s. */
async function relayRound(db: BenchDatabase, tenantId: string, count: number, deliverer: OutboxDeliverer, nats: boolean): Promise<number> {
  await withTransaction(db.pool, (tx) => enqueueEvents(tx, Array.from({ length: count }, (_, i) => ({ tenantId, eventType: "payment.applied", eventKey: `${tenantId}:${i}:applied`, data: payloadOf(i) })), { nats }));
  const logger = createLogger({ level: "silent" });
  const never = new AbortController().signal;
  const started = process.hrtime.bigint();
  // The relay's passes in flight, each until nothing is left (as startRelay runs them, minus the idle waits).
  await Promise.all(Array.from({ length: defaultRelaySettings.passesInFlight }, () => relayUntilIdle(db.pool, [deliverer], "bench", defaultRelaySettings, logger, never)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_message WHERE tenant_id = $1 AND state = 'delivered'", [tenantId]);
  if (rows[0]?.n !== count) throw new Error(`relay delivered ${rows[0]?.n} of ${count}`);
  return count / seconds;
}

/**
 * Relay throughput (lease, deliver, mark, in batches of relayBatchRowsMax) to a local webhook
 * receiver and to JetStream, against a bare loop that sends the same payloads with the same
 * concurrency and no outbox (signed POSTs; JetStream publishes with a Nats-Msg-Id). Alternated
 * in rounds. The goal (issue 13) is at least 0.5 of the bare loop.
 */
export async function run(args: string[]): Promise<BenchReport> {
  const count = Number(args[0] ?? DEFAULT_MESSAGES);
  // The bare loop gets as many sends in flight as the relay has at most.
  const concurrency = defaultRelaySettings.batchRowsMax * defaultRelaySettings.passesInFlight;
  const db = await benchDatabase(8);
  const receiver = await sinkReceiver();
  const stream = await openEventStream(NATS_URL);
  const runId = randomBytes(4).toString("hex");
  try {
    const secret = newSigningSecret();
    const tenants = Array.from({ length: ROUNDS }, (_, r) => ({ web: `bw${runId}${r}`, nats: `bn${runId}${r}` }));
    for (const t of tenants) await addWebhookEndpoint(db.pool, t.web, receiver.url, ["payment.applied"], secret, webhookKeys);
    const webhooks = await alternate(ROUNDS,
      async (round) => (await throughput(count, concurrency, async (i) => {
        const id = `bare-${runId}-${round}-${i}`;
        const body = JSON.stringify({ type: "payment.applied", timestamp: new Date().toISOString(), data: payloadOf(i) });
        const ts = Math.floor(Date.now() / 1000);
        const response = await fetch(receiver.url, { method: "POST", body, headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signWebhook(secret, id, ts, body) } });
        await response.arrayBuffer();
      })).opsPerSecond,
      (round) => relayRound(db, tenants[round]?.web ?? "", count, webhookDeliverer(db.pool, { keys: webhookKeys }), false));
    const jetStream = await alternate(ROUNDS,
      async (round) => (await throughput(count, concurrency, async (i) => {
        const id = `bare-${runId}-${round}-${i}`;
        await stream.jetStream.publish(`clearline.bare${runId}.payment.applied`, JSON.stringify({ type: "payment.applied", timestamp: new Date().toISOString(), data: payloadOf(i) }), { msgID: id });
      })).opsPerSecond,
      (round) => relayRound(db, tenants[round]?.nats ?? "", count, natsDeliverer(stream), true));
    return {
      name: "outbox",
      rows: [
        roundsRow(`relay -> local webhook receiver, ${count} events`, "events/s", `bare signed POST loop, ${concurrency} in flight`, webhooks, ">= 0.5"),
        roundsRow(`relay -> JetStream, ${count} events`, "events/s", `bare publish loop, ${concurrency} in flight`, jetStream, ">= 0.5"),
      ],
      notes: [`batch ${defaultRelaySettings.batchRowsMax} rows per lease, ${defaultRelaySettings.passesInFlight} passes in flight; events written before the clock starts (their cost is the decision's transaction's)`],
    };
  } finally {
    await stream.close();
    await receiver.close();
    await db.close();
  }
}
