import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { approveEverything, SchemeServer } from "../support/scheme-simulator.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { iso8583MessageDuration } from "../../src/observability/metrics-gateway.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { authorizeOverHttp, impatient, startTestGateway, type TestGateway } from "./outbound-support.ts";
import { capturedLogger, eventually, listenPatientScheme, testKeys, testPan } from "./support.ts";

describe("outbound card authorizations (acquirer side)", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let scheme: SchemeServer;
  let gateway: TestGateway;
  // For the tests of a scheme that does not answer in time: its own scheme, so its STANs (a
  // counter per connection) never meet the other connection's.
  let impatientScheme: SchemeServer;
  let impatientGateway: TestGateway;
  let apiKey: string;
  let tenantId: string;
  let keyCounter = 0;
  const pan = testPan("520000", 7);
  const logger = capturedLogger("info").logger;
  const nextKey = () => `auth-${++keyCounter}`;
  const body = (amount: string, terminal = "TERM0001") => ({ card: pan, amount, currency: "EUR", terminal, merchant: "MERCHANT0000001" });

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    const tenant = await createTenant(db.pool, "acquirer-a");
    if (!tenant.ok) throw new Error(tenant.error.message);
    apiKey = tenant.value.apiKey;
    tenantId = tenant.value.tenantId;
    scheme = await listenPatientScheme();
    gateway = await startTestGateway(db.pool, keys, logger, scheme.port);
    impatientScheme = await listenPatientScheme();
    impatientGateway = await startTestGateway(db.pool, keys, logger, impatientScheme.port, { ...impatient, name: "scheme-impatient" });
  });
  beforeEach(() => {
    scheme.behaviour = approveEverything;
    impatientScheme.behaviour = approveEverything;
  });
  afterAll(async () => {
    await impatientGateway.stop();
    await impatientScheme.close();
    await gateway.stop();
    await scheme.close();
    await db.drop();
  });

  async function outboundRow(idemKey: string) {
    const { rows } = await db.pool.query("SELECT * FROM iso8583_outbound WHERE tenant_id = $1 AND idem_key = $2", [tenantId, idemKey]);
    return rows[0];
  }
  const sentWithStan = (mti: string, stan: string) => (received: readonly Message[]) => received.filter((m) => m.mti === mti && m.fields[11] === stan);

  it("signs on at connect with an 0800 carrying network code 001", () => {
    expect(scheme.received.some((m) => m.mti === "0800" && m.fields[70] === "001")).toBe(true);
  });

  it("sends an 0100 and answers 201 approved with the scheme's authorization code; a repeat of the key replays the same body", async () => {
    const key = nextKey();
    const first = await authorizeOverHttp(gateway.baseUrl, apiKey, key, body("12.50"));
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ status: "approved", response_code: "00", authorization_code: "SIM001", amount: "12.50", card: { bin: "520000", last_four: pan.slice(-4) } });
    const request = scheme.received.find((m) => m.mti === "0100" && m.fields[11] === first.json.stan);
    expect(request?.fields[4]).toBe("000000001250");
    expect(request?.fields[37]).toBe(first.json.rrn);
    const outboundAuthorizations = (await iso8583MessageDuration.get()).values
      .find((v) => v.metricName === "clearline_iso8583_message_duration_seconds_count" && v.labels.direction === "outbound" && v.labels.message_class === "authorization" && v.labels.outcome === "response");
    expect(outboundAuthorizations?.value).toBeGreaterThanOrEqual(1);
    const again = await authorizeOverHttp(gateway.baseUrl, apiKey, key, body("12.50"));
    expect([again.text, again.replayed]).toEqual([first.text, true]);
    expect(scheme.received.filter((m) => m.mti === "0100" && m.fields[11] === first.json.stan)).toHaveLength(1);
  });

  it("answers declined with the scheme's code when the scheme declines", async () => {
    scheme.behaviour = () => ({ kind: "answer", responseCode: "51" });
    const call = await authorizeOverHttp(gateway.baseUrl, apiKey, nextKey(), body("99.00"));
    expect(call.json).toMatchObject({ status: "declined", response_code: "51", authorization_code: null });
  });

  it("persists a reversal when the scheme never answers, answers reversed, and repeats it as 0401 until a 0410 arrives", async () => {
    impatientScheme.behaviour = () => ({ kind: "drop" });
    const key = nextKey();
    const call = await authorizeOverHttp(impatientGateway.baseUrl, apiKey, key, body("40.00"));
    expect(call.json).toMatchObject({ status: "reversed", response_code: null });
    const row = await outboundRow(key);
    const original = impatientScheme.received.find((m) => m.mti === "0100" && m.fields[11] === call.json.stan) as Message;
    expect(row.reversal_fields["90"]).toEqual({
      originalMessageTypeIdentifier: "0100", originalSystemTraceAuditNumber: original.fields[11], originalTransmissionDateTime: original.fields[7],
      originalAcquiringInstitutionIdentificationCode: "00000423935", originalForwardingInstitutionIdentificationCode: "00000000000",
    });
    const reversalStan = row.reversal_fields["11"] as string;
    await impatientScheme.waitFor((received) => sentWithStan("0400", reversalStan)(received).length === 1 && sentWithStan("0401", reversalStan)(received).length >= 2);

    impatientScheme.behaviour = approveEverything;
    await eventually(async () => (await outboundRow(key)).reversal_state === "acknowledged", "reversal acknowledged");
    const reversals = impatientScheme.received.filter((m) => m.mti.startsWith("040") && m.fields[11] === reversalStan);
    for (const reversal of reversals) expect(reversal.fields[90]).toEqual(row.reversal_fields["90"]);
    expect(reversals.some((m) => "2" in m.fields)).toBe(false);
  });

  it("records a late 0110 that arrives after the reversal was decided and never turns it into an approval", async () => {
    impatientScheme.behaviour = (message) => (message.mti === "0100" ? { kind: "answer", responseCode: "00", delayMs: 1_000 } : { kind: "answer", responseCode: "00" });
    const key = nextKey();
    const call = await authorizeOverHttp(impatientGateway.baseUrl, apiKey, key, body("7.00"));
    expect(call.json.status).toBe("reversed");
    await eventually(async () => (await outboundRow(key)).late_response_code === "00", "late response recorded");
    const row = await outboundRow(key);
    expect([row.state, row.response_code]).toEqual(["reversed", null]);
    const replay = await authorizeOverHttp(impatientGateway.baseUrl, apiKey, key, body("7.00"));
    expect(replay.json.status).toBe("reversed");
  });

  it("matches each response to its own request when the scheme answers out of order", async () => {
    const amounts = ["1.00", "2.00", "3.00", "4.00", "5.00", "6.00"];
    // The scheme approves even amounts in cents-of-euro and declines odd ones, and answers last-first.
    scheme.behaviour = (message) => ({ kind: "hold", responseCode: Number(message.fields[4]) % 200 === 0 ? "00" : "05" });
    const calls = amounts.map((amount, i) => authorizeOverHttp(gateway.baseUrl, apiKey, nextKey(), body(amount, `TERM000${i}`)));
    await eventually(() => scheme.heldCount === amounts.length, "all requests held by the scheme");
    scheme.releaseHeldInReverse();
    const answers = await Promise.all(calls);
    expect(answers.map((a) => [a.json.amount, a.json.status])).toEqual([
      ["1.00", "declined"], ["2.00", "approved"], ["3.00", "declined"], ["4.00", "approved"], ["5.00", "declined"], ["6.00", "approved"],
    ]);
  });

  it("reverses an authorization in flight when the scheme connection drops, then reconnects and signs on again", async () => {
    scheme.behaviour = () => ({ kind: "hold", responseCode: "00" });
    const signOns = scheme.received.filter((m) => m.fields[70] === "001").length;
    const key = nextKey();
    const call = authorizeOverHttp(gateway.baseUrl, apiKey, key, body("3.30"));
    await eventually(() => scheme.heldCount === 1, "request held");
    scheme.dropConnections();
    expect((await call).json.status).toBe("reversed");
    scheme.releaseHeldInReverse();
    scheme.behaviour = approveEverything;
    await scheme.waitFor((received) => received.filter((m) => m.fields[70] === "001").length > signOns);
    await eventually(async () => (await outboundRow(key)).reversal_state === "acknowledged", "reversal sent after reconnect and acknowledged");
  });

  it("refuses with iso8583_scheme_busy when every in-flight slot stays taken (one past the in-flight bound)", async () => {
    const small = await startTestGateway(db.pool, keys, logger, scheme.port, { name: "scheme-small", inflightMax: 2, slotWaitMs: 100 });
    try {
      scheme.behaviour = () => ({ kind: "hold", responseCode: "00" });
      const held = [authorizeOverHttp(small.baseUrl, apiKey, nextKey(), body("1.10")), authorizeOverHttp(small.baseUrl, apiKey, nextKey(), body("1.20"))];
      await scheme.waitFor((received) => received.filter((m) => m.mti === "0100" && ["000000000110", "000000000120"].includes(m.fields[4] as string)).length === 2);
      const third = await authorizeOverHttp(small.baseUrl, apiKey, nextKey(), body("1.30"));
      expect(third.json.code).toBe("iso8583_scheme_busy");
      expect(third.status).toBe(503);
      scheme.releaseHeldInReverse();
      expect((await Promise.all(held)).map((a) => a.json.status)).toEqual(["approved", "approved"]);
    } finally {
      await small.stop();
    }
  });

  it("refuses with iso8583_scheme_unavailable and stores nothing when no scheme connection is signed on", async () => {
    await scheme.close();
    await eventually(() => !gateway.connection.isSignedOn, "connection lost");
    const key = nextKey();
    const call = await authorizeOverHttp(gateway.baseUrl, apiKey, key, body("5.00"));
    expect(call.json.code).toBe("iso8583_scheme_unavailable");
    expect(call.status).toBe(503); // nothing sent or stored: a client may retry with the same key
    expect(await outboundRow(key)).toBeUndefined();
    scheme = await listenPatientScheme(); // afterAll closes a server
  });
});
