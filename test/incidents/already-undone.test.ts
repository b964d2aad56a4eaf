import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import type { InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import { cardRequest, reversalOf, type SchemeClient } from "../support/scheme-simulator.ts";
import { compensateIncident } from "../../src/incidents/compensate.ts";
import { openIncident } from "../../src/incidents/perimeter.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { fund, givenApiWorld, paymentRequest } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest } from "../files/support.ts";
import { balance, connectClient, givenIssuer, startTestEndpoint, testKeys, testPan } from "../gateway/support.ts";

const wideWindow = () => ({ since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date(Date.now() + 3_600_000).toISOString() });

describe("incident compensation undoes only what reversals and refunds left in effect (docs/decisions/0015, items 5-8)", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let endpoint: InboundEndpoint;
  let client: SchemeClient;
  let stan = 700;
  const nextStan = () => ++stan;
  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    endpoint = await startTestEndpoint(db.pool, keys);
    client = await connectClient(endpoint);
  });
  afterAll(async () => {
    await client.close();
    await endpoint.close();
    await db.drop();
  });

  async function naturalKeyOf(tenantId: string, stanValue: unknown): Promise<string> {
    const { rows } = await db.pool.query<{ natural_key: string }>("SELECT natural_key FROM iso8583_inbound WHERE tenant_id = $1 AND natural_key LIKE $2", [tenantId, `%:${String(stanValue)}:%`]);
    expect(rows).toHaveLength(1);
    return rows[0]?.natural_key ?? "";
  }

  async function compensationsPosted(tenantId: string): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE '%:compensate'", [tenantId]);
    return rows[0]?.n ?? -1;
  }

  it("compensates a 0100 hold a 0400 already released by nothing: already_undone, the customer's balance unchanged", async () => {
    const pans = [testPan("476175", 21), testPan("476175", 22)];
    const issuer = await givenIssuer(db.pool, keys, { name: "undone-full", pans, balanceMinor: 50_000n });
    // Another card's hold stays outstanding: the holds account is not empty, as in production.
    expect((await client.request(cardRequest({ pan: pans[1] as string, amountMinor: 20_000n, stan: nextStan() }))).fields[39]).toBe("00");
    const original = cardRequest({ pan: pans[0] as string, amountMinor: 10_000n, stan: nextStan() });
    expect((await client.request(original)).fields[39]).toBe("00");
    expect((await client.request(reversalOf(original, { stan: nextStan() }))).fields[39]).toBe("00");
    const before = await balance(db.pool, issuer.tenantId, issuer.accountId);
    expect(before).toBe(30_000n);

    const keyPrefix = await naturalKeyOf(issuer.tenantId, original.fields[11]);
    const incident = await openIncident(db.pool, issuer.tenantId, "scheme replayed a hold", { ...wideWindow(), channel: "iso8583", keyPrefix }, "ops-1");
    if (!incident.ok) throw new Error(incident.error.message);
    expect(incident.value.records.map((r) => [r.naturalKey, r.undoneMinor])).toEqual([[keyPrefix, 10_000n]]);
    const released = incident.value.records[0];
    const input = { tenantId: issuer.tenantId, incidentId: incident.value.incidentId, reason: "replayed", operator: "ops-1" };
    const dry = await compensateIncident(db.pool, { ...input, dryRun: true });
    if (!dry.ok) throw new Error(dry.error.message);
    const dryLine = dry.value.compensations.find((c) => c.transferKey === released?.transferKey);
    expect([dryLine?.outcome, dryLine?.undoneMinor, dryLine?.legs]).toEqual(["already_undone", 10_000n, []]);

    const done = await compensateIncident(db.pool, { ...input, dryRun: false });
    if (!done.ok) throw new Error(done.error.message);
    expect(done.value.compensations.map((c) => c.outcome)).toEqual(["already_undone"]);
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(before);
    expect(await compensationsPosted(issuer.tenantId)).toBe(0);
    const recorded = await db.pool.query("SELECT outcome, undone_minor::text FROM incident_compensation WHERE tenant_id = $1", [issuer.tenantId]);
    expect(recorded.rows).toEqual([{ outcome: "already_undone", undone_minor: "10000" }]);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });

  it("compensates a hold partially released through field 95 by the remaining hold only", async () => {
    const pan = testPan("535110", 31);
    const issuer = await givenIssuer(db.pool, keys, { name: "undone-partial", pans: [pan], balanceMinor: 50_000n });
    const original = cardRequest({ pan, amountMinor: 10_000n, stan: nextStan() });
    expect((await client.request(original)).fields[39]).toBe("00");
    // Field 95: the transaction was 6_000 in the end; 4_000 of the hold is released, 6_000 stays held.
    expect((await client.request(reversalOf(original, { stan: nextStan(), actualMinor: 6_000n }))).fields[39]).toBe("00");
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(44_000n);

    const incident = await openIncident(db.pool, issuer.tenantId, "partial hold", { ...wideWindow(), channel: "iso8583" }, "ops-1");
    if (!incident.ok) throw new Error(incident.error.message);
    expect(incident.value.records.map((r) => r.undoneMinor)).toEqual([4_000n]);
    const done = await compensateIncident(db.pool, { tenantId: issuer.tenantId, incidentId: incident.value.incidentId, reason: "replayed", operator: "ops-1", dryRun: false });
    if (!done.ok) throw new Error(done.error.message);
    expect(done.value.compensations.map((c) => [c.outcome, c.undoneMinor, c.legs.map((l) => l.amountMinor)])).toEqual([["posted", 4_000n, [6_000n, 6_000n]]]);
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(50_000n);
    expect(await balance(db.pool, issuer.tenantId, gatewayAccounts.holds("EUR"))).toBe(0n);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });

  it("returns only the unrefunded part of an HTTP payment partially refunded", async () => {
    const world = await givenApiWorld(db.pool, "undone-refund");
    try {
      await fund(world.client, "alice", "100.00");
      await fund(world.client, "bob", "20.00"); // bob has money of his own: a whole mirror would take it
      const paid = await world.client.post("/v1/payments", paymentRequest("order-9", "10.00"), { "idempotency-key": randomUUID() });
      expect(paid.status).toBe(201);
      const refunded = await world.client.post("/v1/refunds", { client_reference: "refund-9", payment_id: paid.json.id, amount: "4.00" }, { "idempotency-key": randomUUID() });
      expect(refunded.status).toBe(201);
      expect((await balanceOf(db.pool, world.tenantId, "bob"))?.balanceMinor).toBe(2_600n);

      const incident = await openIncident(db.pool, world.tenantId, "order paid twice", { ...wideWindow(), channel: "http", keyPrefix: "http:order-9" }, "ops-1");
      if (!incident.ok) throw new Error(incident.error.message);
      expect(incident.value.records.map((r) => [r.naturalKey, r.undoneMinor])).toEqual([["http:order-9", 400n]]);
      const done = await compensateIncident(db.pool, { tenantId: world.tenantId, incidentId: incident.value.incidentId, reason: "paid twice", operator: "ops-1", dryRun: false });
      if (!done.ok) throw new Error(done.error.message);
      expect(done.value.compensations.map((c) => c.outcome)).toEqual(["posted"]);
      expect(done.value.compensations[0]?.legs.map((l) => l.amountMinor)).toEqual([600n, 600n]);
      expect((await balanceOf(db.pool, world.tenantId, "bob"))?.balanceMinor).toBe(2_000n);
      expect((await balanceOf(db.pool, world.tenantId, "alice"))?.balanceMinor).toBe(10_000n);
      expect(await compensationsPosted(world.tenantId)).toBe(1);
      expect((await verifyLedger(db.pool)).problems).toEqual([]);
    } finally {
      await world.api.close();
    }
  });
  it("compensates an ISO 20022 credit a pacs.004 already returned by nothing, and the return by nothing either (already_undone, undoes_original)", async () => {
    const scene = await givenScene(db.pool, "undone-returned");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    expect((await ingest(db.pool, scene, fixture("iso20022/pacs004-return.xml"), "pacs004.xml")).outcomes.applied).toBe(1);
    const { rows: matched } = await db.pool.query<{ natural_key: string; matched_key: string }>(
      `SELECT natural_key, matched_key FROM record_key WHERE tenant_id = $1
         AND matched_key IS NOT NULL`, [scene.tenantId]);
    expect(matched).toHaveLength(1);
    const [returnKey, originalKey] = [matched[0]?.natural_key, matched[0]?.matched_key];
    const euro = async () => Object.entries(await balances(db.pool, scene.tenantId)).filter(([account]) => account.endsWith(".EUR"));
    const before = await euro();

    // The whole channel: the returned credit and its return are both in the perimeter.
    const incident = await openIncident(db.pool, scene.tenantId, "credits received twice", { ...wideWindow(), channel: "iso20022" }, "ops-1");
    if (!incident.ok) throw new Error(incident.error.message);
    const listed = (key: string | undefined) => incident.value.records.find((r) => r.naturalKey === key);
    expect([listed(originalKey)?.undoneMinor, listed(originalKey)?.amountMinor, listed(returnKey)?.undoesKey]).toEqual([100_000n, 100_000n, originalKey]);
    const done = await compensateIncident(db.pool, { tenantId: scene.tenantId, incidentId: incident.value.incidentId, reason: "twice", operator: "ops-1", dryRun: false });
    if (!done.ok) throw new Error(done.error.message);
    const outcomeOf = (key: string | undefined) => done.value.compensations.find((c) => c.transferKey === listed(key)?.transferKey)?.outcome;
    expect([outcomeOf(originalKey), outcomeOf(returnKey)]).toEqual(["already_undone", "undoes_original"]);
    expect(await euro()).toEqual(before);
  });
});
