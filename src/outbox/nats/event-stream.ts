import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { limits } from "../../config/limits.ts";

/**
 * clearline's JetStream stream: every subject `clearline.>` (events out, payment requests in),
 * created when missing with bounded retention (age and bytes) and a duplicate window in which a
 * republished Nats-Msg-Id is dropped. An existing stream is used as it is (its operator may have
 * tuned it).
 */
export const STREAM_NAME = "CLEARLINE";
export const STREAM_SUBJECTS = ["clearline.>"];

export interface EventStream {
  connection: NatsConnection;
  jetStream: JetStreamClient;
  manager: JetStreamManager;
  close(): Promise<void>;
}

const NANOS_PER_MS = 1_000_000;

export async function openEventStream(natsUrl: string): Promise<EventStream> {
  const connection = await connect({ servers: natsUrl, name: `clearline-${process.pid}`, timeout: limits.outbox.deliveryTimeoutMs });
  try {
    const manager = await jetstreamManager(connection);
    await ensureStream(manager);
    return { connection, jetStream: jetstream(connection), manager, close: () => connection.drain() };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

async function ensureStream(manager: JetStreamManager): Promise<void> {
  try {
    await manager.streams.info(STREAM_NAME);
    return;
  } catch (error) {
    if (!(error instanceof Error) || !/stream not found/i.test(error.message)) throw error;
  }
  try {
    await manager.streams.add({
      name: STREAM_NAME, subjects: STREAM_SUBJECTS,
      max_age: limits.outbox.streamMaxAgeMs * NANOS_PER_MS,
      max_bytes: limits.outbox.streamBytesMax,
      duplicate_window: limits.outbox.streamDuplicateWindowMs * NANOS_PER_MS,
    });
  } catch (error) {
    // Another process created it between our look and our add: that stream serves.
    await manager.streams.info(STREAM_NAME).catch(() => { throw error; });
  }
}

/** `clearline.<tenant>.<event>`: a tenant id is one subject token (no dots, spaces or wildcards). */
export function eventSubject(tenantId: string, eventType: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(tenantId)) throw new Error(`tenant id ${tenantId} cannot be a NATS subject token`);
  return `clearline.${tenantId}.${eventType}`;
}
