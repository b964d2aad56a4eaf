import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { openEventStream, STREAM_NAME, type EventStream } from "../../src/outbox/nats/event-stream.ts";
import { natsDeliverer } from "../../src/outbox/nats/nats-deliverer.ts";
import { enqueueEvent } from "../../src/outbox/outbox-store.ts";
import { startRelay } from "../../src/outbox/relay.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { untilRow } from "../support/outbox.ts";

// The real broker. Absent, beforeAll throws and every test here FAILS (never skipped): a run
// without NATS says plainly that these did not pass.
const NATS_URL = process.env.CLEARLINE_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("events published to NATS JetStream by the outbox relay", () => {
  let db: TestDatabase;
  let stream: EventStream;
  // A fresh tenant token per run: the stream outlives test runs.
  const tenantId = `t${randomBytes(6).toString("hex")}`;

  beforeAll(async () => {
    db = await createTestDatabase();
    stream = await openEventStream(NATS_URL).catch((error: unknown) => {
      throw new Error(`NATS JetStream is not reachable at ${NATS_URL}: these tests did not run (${String(error)})`);
    });
  });
  afterAll(async () => {
    await stream?.close();
    await db.drop();
  });

  it("the stream exists with bounded retention and a duplicate window", async () => {
    const info = await stream.manager.streams.info(STREAM_NAME);
    expect(info.config.subjects).toContain("clearline.>");
    expect(info.config.max_age).toBeGreaterThan(0);
    expect(info.config.max_bytes).toBeGreaterThan(0);
    expect(info.config.duplicate_window).toBeGreaterThan(0);
  });

  it("an event goes to clearline.<tenant>.<event> with Nats-Msg-Id = its derived key, and a republish is dropped", async () => {
    const key = `pay-${tenantId}:debit:applied`;
    await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId, eventType: "payment.applied", eventKey: key, data: { amountMinor: 500n } }, { nats: true }));
    const relay = startRelay(db.pool, [natsDeliverer(stream)], createLogger({ level: "silent" }));
    try {
      await untilRow(db.pool, "SELECT state FROM outbox_message WHERE tenant_id = $1 AND message_key = $2", [tenantId, key], (rows: Array<{ state: string }>) => rows[0]?.state === "delivered");
    } finally {
      await relay.stop();
    }
    const subject = `clearline.${tenantId}.payment.applied`;
    const stored = await stream.manager.streams.getMessage(STREAM_NAME, { last_by_subj: subject });
    expect(stored?.header.get("Nats-Msg-Id")).toBe(key);
    expect(stored?.json()).toMatchObject({ type: "payment.applied", data: { amountMinor: "500" } });

    // What a relay killed after the publish and before the mark does on its next attempt.
    const again = await stream.jetStream.publish(subject, stored?.data ?? new Uint8Array(), { msgID: key });
    expect(again.duplicate).toBe(true);
    const info = await stream.manager.streams.info(STREAM_NAME, { subjects_filter: subject });
    expect(info.state.subjects?.[subject]).toBe(1);
  });
});
