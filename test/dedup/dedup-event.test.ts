import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { recordDedupEventsCheaply, type DedupEvent } from "../../src/dedup/dedup-event.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const event = (tenantId: string, key: string): DedupEvent => ({ tenantId, channel: "http", scope: "POST /v1/payments", dedupKey: key, reason: "replayed", originalRef: "pay_x" });

describe("stand-alone dedup records", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  async function count(tenantId: string): Promise<number> {
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM dedup_event WHERE tenant_id = $1", [tenantId]);
    return rows[0].n;
  }

  it("has written every caller's row by the time that caller's write resolves, when many write at once", async () => {
    await Promise.all(Array.from({ length: 64 }, (_, i) => recordDedupEventsCheaply(db.pool, [event("many", `k-${i}`)])));
    expect(await count("many")).toBe(64);
  });

  it(`writes a caller alone rather than queue past ${limits.http.auditBatchEventsMax} events`, async () => {
    const big = Array.from({ length: limits.http.auditBatchEventsMax + 1 }, (_, i) => event("big", `b-${i}`));
    await recordDedupEventsCheaply(db.pool, big);
    expect(await count("big")).toBe(limits.http.auditBatchEventsMax + 1);
  });

  it("keeps what it records: key, channel, scope, reason and the original effect", async () => {
    await recordDedupEventsCheaply(db.pool, [event("one", "the-key")]);
    const { rows } = await db.pool.query("SELECT channel, scope, dedup_key, reason, original_ref FROM dedup_event WHERE tenant_id = 'one'");
    expect(rows).toEqual([{ channel: "http", scope: "POST /v1/payments", dedup_key: "the-key", reason: "replayed", original_ref: "pay_x" }]);
  });
});
