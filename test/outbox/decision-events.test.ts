import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { fixture, givenScene, ingest } from "../files/support.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { testWebhookKeys } from "../support/outbox.ts";

const webhookKeys = testWebhookKeys();

describe("decisions write their events in their own transaction", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  const rows = async (tenantId: string) => (await db.pool.query<{ message_type: string; message_key: string; destination: string }>(
    "SELECT message_type, message_key, destination FROM outbox_message WHERE tenant_id = $1 ORDER BY id", [tenantId])).rows;

  it("a processed file tells file.processed once, and a conflict held for review tells record.conflict, to each subscribed endpoint only", async () => {
    const scene = await givenScene(db.pool, "events");
    const endpoint = await addWebhookEndpoint(db.pool, scene.tenantId, "http://127.0.0.1:9/hooks", ["file.processed", "record.conflict"], newSigningSecret(), webhookKeys);
    await addWebhookEndpoint(db.pool, scene.tenantId, "http://127.0.0.1:9/other", ["payment.applied"], newSigningSecret(), webhookKeys);
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const corrected = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    expect(corrected.outcomes.conflict).toBe(1);
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected-again.ach");

    const written = await rows(scene.tenantId);
    expect(written.every((r) => r.destination === `webhook:${endpoint.endpointId}`)).toBe(true);
    const processed = written.filter((r) => r.message_type === "file.processed");
    expect(processed.map((r) => r.message_key)).toContain(`${original.file_id}:processed`);
    expect(processed.map((r) => r.message_key)).toContain(`${corrected.file_id}:processed`);
    // The conflict seen again in the re-sent file is the same review item: one event, not two.
    const conflicts = written.filter((r) => r.message_type === "record.conflict");
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]?.message_key).toMatch(/^rev_[0-9a-f]{24}:held$/);
  });
});
