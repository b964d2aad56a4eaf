import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compensateIncident } from "../../src/incidents/compensate.ts";
import { openIncident } from "../../src/incidents/perimeter.ts";
import { isSourcePaused, pauseSource, resumeSource } from "../../src/incidents/source-pause.ts";
import { createPartner } from "../../src/partners/partners.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { cardRequest } from "../support/scheme-simulator.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, ingest } from "../files/support.ts";
import { connectClient, givenIssuer, startTestEndpoint, testKeys, testPan } from "../gateway/support.ts";

const wideWindow = () => ({ since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date(Date.now() + 3_600_000).toISOString() });

describe("incident tooling: the full perimeter, a keyed compensation batch, sources stopped", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "incident");
    await fund(world.client, "alice", "100.00");
    for (const reference of ["order-1", "order-2"]) {
      const paid = await world.client.post("/v1/payments", paymentRequest(reference, "10.00"), { "idempotency-key": randomUUID() });
      expect(paid.status).toBe(201);
    }
    const partner = await createPartner(db.pool, world.tenantId, "clearing");
    if (!partner.ok) throw new Error(partner.error.message);
    await ingest(db.pool, { tenantId: world.tenantId, partner: partner.value }, fixture("ach/original.ach"), "original.ach");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("lists every record of the window across channels, with its transfer and the totals", async () => {
    const incident = await openIncident(db.pool, world.tenantId, "everything today", wideWindow(), "ops-1");
    expect(incident.ok).toBe(true);
    if (!incident.ok) return;
    const channels = incident.value.records.map((r) => r.channel);
    expect(channels.filter((c) => c === "http")).toHaveLength(3); // the funding and two payments
    expect(channels.filter((c) => c === "ach")).toHaveLength(5);
    expect(incident.value.records.every((r) => r.transferKey !== null)).toBe(true);
    expect(incident.value.totals).toEqual({ USD: String(10_000 + 1_000 + 1_000 + 150_000) });
  });

  it("narrows by channel and key prefix, and the same perimeter twice is the same incident", async () => {
    const criteria = { ...wideWindow(), channel: "http" as const, keyPrefix: "http:order-" };
    const first = await openIncident(db.pool, world.tenantId, "double charge on orders", criteria, "ops-1");
    const again = await openIncident(db.pool, world.tenantId, "double charge on orders", criteria, "ops-2");
    expect(first.ok && again.ok && first.value.incidentId === again.value.incidentId).toBe(true);
    expect(again.ok && again.value.records.map((r) => r.naturalKey)).toEqual(["http:order-1", "http:order-2"]);
    expect(again.ok && again.value.openedBy).toBe("ops-1");
  });

  it("posts nothing on a dry run, then compensates each transfer once, keyed <transfer key>:compensate", async () => {
    const incident = await openIncident(db.pool, world.tenantId, "orders paid twice", { ...wideWindow(), channel: "http", keyPrefix: "http:order-" }, "ops-1");
    if (!incident.ok) throw new Error(incident.error.message);
    const input = { tenantId: world.tenantId, incidentId: incident.value.incidentId, reason: "paid twice by a bug", operator: "ops-1" };
    const dry = await compensateIncident(db.pool, { ...input, dryRun: true });
    expect(dry.ok && dry.value.compensations.map((c) => [c.compensationKey, c.outcome])).toEqual([
      ["api:order-1:debit:compensate", "would_post"], ["api:order-2:debit:compensate", "would_post"]]);
    expect((await balanceOf(db.pool, world.tenantId, "bob"))?.balanceMinor).toBe(2_000n);

    const done = await compensateIncident(db.pool, { ...input, dryRun: false });
    expect(done.ok && done.value.compensations.map((c) => c.outcome)).toEqual(["posted", "posted"]);
    const repeated = await compensateIncident(db.pool, { ...input, dryRun: false, operator: "ops-2" });
    expect(repeated.ok && repeated.value.compensations.map((c) => c.outcome)).toEqual(["already_compensated", "already_compensated"]);
    expect((await balanceOf(db.pool, world.tenantId, "bob"))?.balanceMinor).toBe(0n);
    expect((await balanceOf(db.pool, world.tenantId, "alice"))?.balanceMinor).toBe(10_000n);
    const { rows } = await db.pool.query("SELECT kind, count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE '%:compensate' GROUP BY kind", [world.tenantId]);
    expect(rows).toEqual([{ kind: "correction-compensation", n: 2 }]);
  });

  it("refuses a compensation the funds do not allow (the payee spent the money), records it, and posts the others", async () => {
    const other = await givenApiWorld(db.pool, "incident-spent");
    try {
      await fund(other.client, "alice", "30.00");
      for (const [reference, amount] of [["spent-1", "10.00"], ["kept-1", "5.00"]] as const) {
        expect((await other.client.post("/v1/payments", paymentRequest(reference, amount), { "idempotency-key": randomUUID() })).status).toBe(201);
      }
      // bob pays the 15.00 away to settlement: what spent-1 brought him is gone.
      const away = await other.client.post("/v1/payments", paymentRequest("bob-out", "15.00", { debtor_account: "bob", creditor_account: "settlement" }), { "idempotency-key": randomUUID() });
      expect(away.status).toBe(201);
      expect((await other.client.post("/v1/payments", paymentRequest("kept-2", "5.00"), { "idempotency-key": randomUUID() })).status).toBe(201);
      const incident = await openIncident(db.pool, other.tenantId, "orders", { ...wideWindow(), channel: "http", keyPrefix: "http:" }, "ops-1");
      if (!incident.ok) throw new Error(incident.error.message);
      const done = await compensateIncident(db.pool, { tenantId: other.tenantId, incidentId: incident.value.incidentId, reason: "bug", operator: "ops-1", dryRun: false });
      if (!done.ok) throw new Error(done.error.message);
      const outcome = (key: string) => done.value.compensations.find((c) => c.transferKey === key);
      // In posting order: the funding needs alice's 30.00 back, she has 10.00 left: refused.
      expect(outcome("api:kept-2:debit")?.outcome).toBe("posted");
      expect(done.value.compensations.filter((c) => c.outcome === "refused").map((c) => c.detail)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^LEDGER_INSUFFICIENT_FUNDS/)]));
      const { rows } = await db.pool.query("SELECT outcome, count(*)::int AS n FROM incident_compensation WHERE tenant_id = $1 GROUP BY outcome ORDER BY outcome", [other.tenantId]);
      expect(rows.find((r) => r.outcome === "refused")?.n).toBeGreaterThan(0);
    } finally {
      await other.api.close();
    }
  });

  it("answers 91 for the tenant's card messages while its ISO 8583 source is paused, and decides again once resumed", async () => {
    const keys = testKeys();
    const pan = testPan("402100", 1);
    const issuer = await givenIssuer(db.pool, keys, { name: "paused-issuer", pans: [pan], balanceMinor: 50_000n });
    const endpoint = await startTestEndpoint(db.pool, keys);
    const client = await connectClient(endpoint);
    try {
      await pauseSource(db.pool, issuer.tenantId, "iso8583", "ops-1", "scheme duplicates under investigation");
      expect(await isSourcePaused(db.pool, issuer.tenantId, "iso8583")).toBe(true);
      const refused = await client.request(cardRequest({ pan, amountMinor: 1_000n, stan: 1, terminal: "TERM0001" }));
      expect(refused.fields[39]).toBe("91");
      expect((await balanceOf(db.pool, issuer.tenantId, issuer.accountId))?.balanceMinor).toBe(50_000n);
      expect(await resumeSource(db.pool, issuer.tenantId, "iso8583")).toBe(true);
      const approved = await client.request(cardRequest({ pan, amountMinor: 1_000n, stan: 2, terminal: "TERM0001" }));
      expect(approved.fields[39]).toBe("00");
    } finally {
      await client.close();
      await endpoint.close();
    }
  });
});
