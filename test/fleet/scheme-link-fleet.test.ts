import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listLeases, takeoverBoundMs } from "../../src/fleet/index.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { approveEverything, type SchemeServer } from "../support/scheme-simulator.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";
import { authorizeOverHttp } from "../gateway/outbound-support.ts";
import { listenPatientScheme, testPan } from "../gateway/support.ts";

const LEASE_MS = 3_000;

describe("the outbound scheme link of a fleet of two serve processes", () => {
  let db: TestDatabase;
  let scheme: SchemeServer;
  const processes: ServeProcess[] = [];
  // One card key for the fleet: every process must hash a card the same way.
  const cardHashSecret = randomBytes(32).toString("hex");

  beforeAll(async () => {
    db = await createTestDatabase();
    scheme = await listenPatientScheme();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await scheme.close();
    await db.drop();
  });

  const serve = async () => {
    const started = await startServeProcess({
      DATABASE_URL: db.url, CLEARLINE_FLEET_LEASE_MS: String(LEASE_MS),
      CLEARLINE_CARD_HASH_SECRET: cardHashSecret,
      CLEARLINE_ISO8583_OUTBOUND_HOST: "127.0.0.1",
      CLEARLINE_ISO8583_OUTBOUND_PORT: String(scheme.port),
      CLEARLINE_ISO8583_ACQUIRER_ID: "423935", CLEARLINE_ISO8583_OUTBOUND_TIMEOUT_MS: "400",
    });
    processes.push(started);
    return started;
  };
  const linkLease = async () => (await listLeases(db.pool))
    .find((l) => l.leaseName === `scheme-link:127.0.0.1:${scheme.port}`);
  const reversalState = async (tenantId: string, key: string) => {
    const { rows } = await db.pool.query<{ reversal_state: string | null }>(
      "SELECT reversal_state FROM iso8583_outbound WHERE tenant_id = $1 AND idem_key = $2",
      [tenantId, key]);
    return rows[0]?.reversal_state;
  };

  it("is held by one process at a time; the survivor of a kill sends the reversal left pending",
    async () => {
    const tenant = await createTenant(db.pool, "fleet-acquirer");
    if (!tenant.ok) throw new Error(tenant.error.message);
    const card = {
      card: testPan("530000", 7), amount: "12.00", currency: "EUR", terminal: "TERM0001",
      merchant: "MERCHANT0000001",
    };
    const { apiKey, tenantId } = tenant.value;
    scheme.behaviour = () => ({ kind: "drop" });   // authorizations and reversals go unanswered
    const first = await serve();
    await eventually(async () => (await linkLease())?.holderAddress === first.baseUrl);
    const second = await serve();
    await eventually(() => scheme.received.some((m) => m.mti === "0800"));

    // The holder sends; its authorization times out and is reversed; the reversal waits for a 0410.
    const reversed = await authorizeOverHttp(first.baseUrl, apiKey, "fleet-auth-1", card);
    expect(reversed.json.status).toBe("reversed");
    expect(await reversalState(tenantId, "fleet-auth-1")).toBe("pending");
    // The other process has no link: it says so, and sends nothing.
    const elsewhere = await authorizeOverHttp(second.baseUrl, apiKey, "fleet-auth-2", card);
    expect(elsewhere.status).toBe(503);
    expect(elsewhere.json.code).toBe("iso8583_scheme_unavailable");

    const before = await linkLease();
    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();
    scheme.behaviour = approveEverything;
    const acknowledged = async () =>
      (await reversalState(tenantId, "fleet-auth-1")) === "acknowledged";
    await eventually(acknowledged);

    const after = await linkLease();
    expect(after).toMatchObject({
      holderAddress: second.baseUrl, token: (before?.token ?? 0n) + 1n,
      previousHolder: before?.holder,
    });
    const lastRenewalMs = after?.previousRenewedAt?.getTime() ?? 0;
    const movedAfterMs = (after?.acquiredAt.getTime() ?? 0) - lastRenewalMs;
    expect(movedAfterMs).toBeLessThanOrEqual(takeoverBoundMs(LEASE_MS));
    // The repeat, from the survivor.
    expect(scheme.received.some((m) => m.mti === "0401")).toBe(true);
    expect(scheme.peakConnections).toBe(1);
  });
});
