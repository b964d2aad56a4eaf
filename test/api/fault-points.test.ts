import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultPoint } from "../../src/requests/fault-points.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { startServeProcess } from "../support/serve-process.ts";

describe("a process killed in the request path", () => {
  let db: TestDatabase;
  let tenant: { tenantId: string; apiKey: string };
  beforeAll(async () => {
    db = await createTestDatabase();
    tenant = await givenTenant(db.pool, "faults");
    await givenAccounts(db.pool, tenant.tenantId, [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]]);
    await post(db.pool, transferOf(tenant.tenantId, "seed", "settlement", "alice", 10_000n));
  });
  afterAll(async () => {
    await db.drop();
  });

  const points: FaultPoint[] = ["after_claim", "after_posting", "after_commit"];
  for (const point of points) {
    it(`posts exactly once when killed ${point.replace("_", " ")} and the same request is retried`, async () => {
      const key = randomUUID();
      const clientReference = `fault-${point}`;
      const body = { client_reference: clientReference, amount: "12.34", currency: "USD", debtor_account: "alice", creditor_account: "bob" };

      const doomed = await startServeProcess({ DATABASE_URL: db.url, CLEARLINE_FAULT_POINT: point });
      const lost = await new ApiClient(doomed.baseUrl, tenant.apiKey).singleSend().post("/v1/payments", body, { "idempotency-key": key }).then(
        () => "answered", () => "connection lost",
      );
      expect(lost).toBe("connection lost");
      expect(await doomed.exited).toBeNull(); // killed by a signal

      const healthy = await startServeProcess({ DATABASE_URL: db.url });
      try {
        const retried = await new ApiClient(healthy.baseUrl, tenant.apiKey).post("/v1/payments", body, { "idempotency-key": key });
        expect(retried.status).toBe(201);
        expect(retried.json).toMatchObject({ client_reference: clientReference, status: "succeeded", amount: "12.34" });
        const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key = $2", [tenant.tenantId, `api:${clientReference}:debit`]);
        expect(rows[0].n).toBe(1);
      } finally {
        await healthy.stop();
      }
    });
  }
});
