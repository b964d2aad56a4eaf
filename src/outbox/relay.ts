import { randomBytes } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { outboxDeliveries, outboxOldestUndeliveredAge } from "../observability/metrics-outbox.ts";
import { backoffMs } from "./backoff.ts";
import { OutboxDestinationDisabled, OutboxPermanentError, type OutboxDeliverer, type OutboxMessage } from "./deliverer.ts";
import { outboxFaultPoint } from "./fault-points.ts";
import { leaseDue, markDelivered, markDeliveredAndLease, markFailed, markHeld, oldestUndeliveredAgeSeconds, type LeaseRef } from "./outbox-store.ts";

export interface RelaySettings {
  batchRowsMax: number;
  leaseMs: number;
  deliveryTimeoutMs: number;
  attemptsMax: number;
  idlePollMs: number;
  passesInFlight: number;
}

export const defaultRelaySettings: RelaySettings = {
  batchRowsMax: limits.outbox.relayBatchRowsMax,
  leaseMs: limits.outbox.leaseMs,
  deliveryTimeoutMs: limits.outbox.deliveryTimeoutMs,
  attemptsMax: limits.outbox.attemptsMax,
  idlePollMs: limits.outbox.relayIdlePollMs,
  passesInFlight: limits.outbox.relayPassesInFlight,
};

export interface Relay {
  readonly relayId: string;
  /** Stops leasing, aborts deliveries in flight (their rows come back after their lease) and waits for the loop. */
  stop(): Promise<void>;
}

/**
 * The outbox relay: leases due rows, hands each to the first deliverer that can deliver its
 * destination (a batch concurrently), marks the delivered ones and leases the next batch in one
 * statement (one commit per batch while rows are due), and schedules
 * the failed ones with backoff, or dead-letters them. Several relays (one per `clearline serve`)
 * share one table: SKIP LOCKED leases keep them apart.
 */
export function startRelay(pool: Pool, deliverers: readonly OutboxDeliverer[], logger: Logger, settings: RelaySettings = defaultRelaySettings): Relay {
  const relayId = `relay-${process.pid}-${randomBytes(4).toString("hex")}`;
  const stopping = new AbortController();
  const wakers = new Set<() => void>();
  // The oldest-undelivered gauge is read at most once per idle poll, busy or not (one query, not one per batch).
  let ageReadAt = 0;
  const refreshAge = async () => {
    if (Date.now() - ageReadAt < settings.idlePollMs) return;
    ageReadAt = Date.now();
    outboxOldestUndeliveredAge.set(await oldestUndeliveredAgeSeconds(pool));
  };
  // A pass that fails (the database gone) is logged once per interval with a count (0082).
  const passFailures = repeatedFailureLog(logger, "outbox relay pass failed; it runs again");
  // Several passes at once, kept apart by SKIP LOCKED like passes of different relays.
  const loops = Array.from({ length: settings.passesInFlight }, async () => {
    while (!stopping.signal.aborted) {
      try {
        await relayUntilIdle(pool, deliverers, relayId, settings, logger, stopping.signal, refreshAge);
        await refreshAge();
        passFailures.succeeded();
      } catch (error) {
        if (!stopping.signal.aborted) passFailures.failed(error, { relayId });
      }
      if (!stopping.signal.aborted) {
        await new Promise<void>((resolve) => {
          const wake = () => { clearTimeout(timer); wakers.delete(wake); resolve(); };
          const timer = setTimeout(wake, settings.idlePollMs);
          wakers.add(wake);
        });
      }
    }
  });
  return {
    relayId,
    async stop() {
      stopping.abort();
      for (const wake of [...wakers]) wake();
      await Promise.all(loops);
      passFailures.close();
    },
  };
}

/** One pass: lease, deliver, mark. Returns how many rows it leased. */
export async function relayPass(pool: Pool, deliverers: readonly OutboxDeliverer[], relayId: string, settings: RelaySettings, logger: Logger, stopSignal: AbortSignal): Promise<number> {
  const messages = await leaseDue(pool, relayId, settings.batchRowsMax, settings.leaseMs);
  if (messages.length === 0) return 0;
  outboxFaultPoint("outbox_after_lease");
  const delivered = await deliverBatch(pool, deliverers, messages, relayId, settings, logger, stopSignal);
  countDelivered(await markDelivered(pool, delivered), delivered.length);
  outboxFaultPoint("outbox_after_mark");
  return messages.length;
}

/**
 * Passes back to back until no row is due (or the relay stops): each batch's mark leases the
 * next batch in the same statement, one commit per batch. Returns how many rows it leased.
 */
export async function relayUntilIdle(pool: Pool, deliverers: readonly OutboxDeliverer[], relayId: string, settings: RelaySettings, logger: Logger, stopSignal: AbortSignal, afterBatch: () => Promise<void> = async () => {}): Promise<number> {
  let batch = await leaseDue(pool, relayId, settings.batchRowsMax, settings.leaseMs);
  let leased = 0;
  while (batch.length > 0) {
    leased += batch.length;
    outboxFaultPoint("outbox_after_lease");
    const delivered = await deliverBatch(pool, deliverers, batch, relayId, settings, logger, stopSignal);
    const rowsNext = stopSignal.aborted ? 0 : settings.batchRowsMax;
    const { marked, next } = await markDeliveredAndLease(pool, delivered, relayId, rowsNext, settings.leaseMs);
    countDelivered(marked, delivered.length);
    outboxFaultPoint("outbox_after_mark");
    await afterBatch();
    batch = next;
  }
  return leased;
}

/** Delivers a leased batch concurrently; schedules or dead-letters the failures; returns the delivered. */
async function deliverBatch(pool: Pool, deliverers: readonly OutboxDeliverer[], messages: readonly OutboxMessage[], relayId: string, settings: RelaySettings, logger: Logger, stopSignal: AbortSignal): Promise<LeaseRef[]> {
  const results = await Promise.all(messages.map((message) => attempt(message, deliverers, settings.deliveryTimeoutMs, stopSignal)));
  outboxFaultPoint("outbox_after_send");
  const delivered: LeaseRef[] = [];
  for (const [index, result] of results.entries()) {
    const message = messages[index] as OutboxMessage;
    if (result.ok) { delivered.push(message); continue; }
    if (stopSignal.aborted) continue; // stopping, not failing: the row comes back after its lease
    if (result.held) {
      // Its destination said so once (the deliverer logs the disable); a line per row would repeat it.
      const held = await markHeld(pool, message, result.error.slice(0, limits.outbox.lastErrorCharsMax));
      outboxDeliveries.inc({ outcome: held ? "held" : "fenced" });
      logger.debug({ relayId, tenant: message.tenantId, outboxId: message.id, destination: message.destination }, "outbox message held: its destination is disabled");
      continue;
    }
    const dead = result.permanent || message.attempts >= settings.attemptsMax;
    const marked = await markFailed(pool, message, result.error.slice(0, limits.outbox.lastErrorCharsMax), dead ? { dead: true } : { dead: false, retryInMs: backoffMs(message.attempts) });
    outboxDeliveries.inc({ outcome: marked ? (dead ? "dead" : "retry") : "fenced" });
    logger.warn({ relayId, tenant: message.tenantId, outboxId: message.id, messageKey: message.messageKey, destination: message.destination, attempts: message.attempts, dead, error: result.error }, "outbox delivery failed");
  }
  return delivered;
}

function countDelivered(marked: number, delivered: number): void {
  outboxDeliveries.inc({ outcome: "delivered" }, marked);
  if (marked < delivered) outboxDeliveries.inc({ outcome: "fenced" }, delivered - marked);
}

type AttemptResult = { ok: true } | { ok: false; permanent: boolean; held: boolean; error: string };

async function attempt(message: OutboxMessage, deliverers: readonly OutboxDeliverer[], timeoutMs: number, stopSignal: AbortSignal): Promise<AttemptResult> {
  const deliverer = deliverers.find((candidate) => candidate.canDeliver(message.destination));
  if (!deliverer) return { ok: false, permanent: false, held: false, error: `no deliverer for destination ${message.destination} in this process (is it configured?)` };
  try {
    await deliverer.deliver(message, AbortSignal.any([stopSignal, AbortSignal.timeout(timeoutMs)]));
    return { ok: true };
  } catch (error) {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, permanent: error instanceof OutboxPermanentError, held: error instanceof OutboxDestinationDisabled, error: text };
  }
}
