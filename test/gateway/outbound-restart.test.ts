import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { cardIdentity } from "../../src/cards/cards.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { cardAuthorizationEndpoint } from "../../src/cards/card-authorization.ts";
import { matchKeyOf } from "../../src/gateway/outbound-connection.ts";
import { insertOutbound } from "../../src/cards/outbound-store.ts";
import { approveEverything, cardRequest, SchemeServer } from "../support/scheme-simulator.ts";
import { claim } from "../../src/idempotency/records.ts";
import { requestDigest } from "../../src/idempotency/request-digest.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { authorizeOverHttp, impatient, startTestGateway } from "./outbound-support.ts";
import { capturedLogger, eventually, listenPatientScheme, testKeys, testPan } from "./support.ts";

describe("outbound reversals across a restart of the gateway", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let scheme: SchemeServer;
  let apiKey: string;
  let tenantId: string;
  const pan = testPan("530000", 3);
  const logger = capturedLogger("info").logger;

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    const tenant = await createTenant(db.pool, "acquirer-restart");
    if (!tenant.ok) throw new Error(tenant.error.message);
    apiKey = tenant.value.apiKey;
    tenantId = tenant.value.tenantId;
    scheme = await listenPatientScheme();
  });
  afterAll(async () => {
    await scheme.close();
    await db.drop();
  });

  const reversalState = async (idemKey: string) =>
    (await db.pool.query<{ reversal_state: string | null; state: string }>("SELECT state, reversal_state FROM iso8583_outbound WHERE tenant_id = $1 AND idem_key = $2", [tenantId, idemKey])).rows[0];

  it("keeps repeating a persisted reversal after the gateway restarts, until the scheme acknowledges it", async () => {
    scheme.behaviour = () => ({ kind: "drop" });
    const first = await startTestGateway(db.pool, keys, logger, scheme.port, impatient);
    const call = await authorizeOverHttp(first.baseUrl, apiKey, "restart-1", { card: pan, amount: "25.00", currency: "EUR", terminal: "TERM0001", merchant: "MERCHANT0000001" });
    expect(call.json.status).toBe("reversed");
    const { rows } = await db.pool.query<{ stan: string }>("SELECT reversal_fields->>'11' AS stan FROM iso8583_outbound WHERE tenant_id = $1 AND idem_key = 'restart-1'", [tenantId]);
    const reversalStan = rows[0]?.stan;
    await scheme.waitFor((received) => received.some((m) => m.mti === "0400" && m.fields[11] === reversalStan));
    await first.stop();
    const sentBeforeRestart = scheme.received.filter((m) => m.mti.startsWith("040") && m.fields[11] === reversalStan).length;
    expect(await reversalState("restart-1")).toEqual({ state: "reversed", reversal_state: "pending" });

    scheme.behaviour = approveEverything;
    const second = await startTestGateway(db.pool, keys, logger, scheme.port);
    try {
      await eventually(async () => (await reversalState("restart-1"))?.reversal_state === "acknowledged", "reversal acknowledged after restart");
      const repeatsAfterRestart = scheme.received.filter((m) => m.mti === "0401" && m.fields[11] === reversalStan).length;
      expect(scheme.received.filter((m) => m.mti.startsWith("040") && m.fields[11] === reversalStan).length).toBeGreaterThan(sentBeforeRestart);
      expect(repeatsAfterRestart).toBeGreaterThanOrEqual(1);
    } finally {
      await second.stop();
    }
  });

  it("reverses an authorization that a stopped process sent and never decided, and answers its key with reversed", async () => {
    // What a crash between sending the 0100 and deciding leaves behind: a claimed key and a sent row.
    const card = cardIdentity(keys, tenantId, pan);
    const canonical = { card_hash: card.cardHash, amount_minor: "900", currency: "EUR", terminal: "TERM0002", merchant: "MERCHANT0000001" };
    const message = cardRequest({ pan, amountMinor: 900n, stan: 424_242, terminal: "TERM0002", acquirer: "423935" });
    await withTransaction(db.pool, async (tx) => {
      const claimed = await claim(tx, { tenantId, endpoint: cardAuthorizationEndpoint, key: "crashed-1" }, requestDigest(canonical), canonical);
      if (claimed.kind !== "claimed") throw new Error("claim failed");
      await insertOutbound(tx, {
        tenantId, idemKey: "crashed-1", attempt: claimed.attempt, connection: "scheme-test", matchKey: matchKeyOf(message), request: message,
        cardHash: card.cardHash, cardBin: card.bin, cardLastFour: card.lastFour, amountMinor: 900n, currency: "EUR",
      });
    });
    scheme.behaviour = approveEverything;
    const next = await startTestGateway(db.pool, keys, logger, scheme.port, impatient); // undecided past its response bound
    try {
      await eventually(async () => (await reversalState("crashed-1"))?.reversal_state === "acknowledged", "undecided authorization reversed");
      const reversal = scheme.received.find((m) => m.mti === "0400" && (m.fields[90] as Record<string, string>).originalSystemTraceAuditNumber === "424242");
      expect(reversal).toBeDefined();
      const repeat = await authorizeOverHttp(next.baseUrl, apiKey, "crashed-1", { card: pan, amount: "9.00", currency: "EUR", terminal: "TERM0002", merchant: "MERCHANT0000001" });
      expect([repeat.json.status, repeat.replayed]).toEqual(["reversed", true]);
      expect(scheme.received.filter((m) => m.mti === "0100" && m.fields[11] === "424242")).toHaveLength(0);
    } finally {
      await next.stop();
    }
  });
});
