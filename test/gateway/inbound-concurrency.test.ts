import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import type { InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import { cardRequest, type SchemeClient } from "../support/scheme-simulator.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { advanceProjection } from "../../src/ledger/balance.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { entrySums, runConcurrently } from "../support/money.ts";
import { balance, connectClient, givenIssuer, startTestEndpoint, testKeys, testPan, type Issuer } from "./support.ts";

describe("the ISO 8583 endpoint under concurrent load", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let endpoint: InboundEndpoint;
  let clients: SchemeClient[];
  let issuer: Issuer;
  const pans = [testPan("401200", 1), testPan("401200", 2)];

  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 12 });
    keys = testKeys();
    issuer = await givenIssuer(db.pool, keys, { name: "issuer-load", pans, balanceMinor: 150_000n });
    endpoint = await startTestEndpoint(db.pool, keys);
    clients = await Promise.all(Array.from({ length: 4 }, () => connectClient(endpoint)));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await endpoint.close();
    await db.drop();
  });

  it("decides 200 concurrent authorizations over 4 connections, with repeats among them, and the balances are exact", async () => {
    const requests: Message[] = Array.from({ length: 200 }, (_, i) =>
      cardRequest({ pan: pans[i % 2] as string, amountMinor: 1_000n, stan: i + 1, terminal: `TERM${String(i % 4).padStart(4, "0")}` }));
    const sends = requests.map((request, i) => (clients[i % 4] as SchemeClient).request(request));
    // A repeat of every tenth request, on another connection, while the originals are in flight.
    const repeats = requests.filter((_, i) => i % 10 === 0).map((request, i) => (clients[(i + 1) % 4] as SchemeClient).request({ ...request, mti: "0101" }));
    const first = await Promise.all(sends);
    const repeated = await Promise.all(repeats);
    // On a loaded machine a request may wait past the pool's connect timeout and be answered 96
    // (nothing committed): the scheme repeats it, as it would, until it is decided.
    const responses: Message[] = [];
    for (const [i, response] of first.entries()) {
      let answer = response;
      for (let attempt = 0; answer.fields[39] === "96" && attempt < 20; attempt++) {
        answer = await (clients[i % 4] as SchemeClient).request({ ...(requests[i] as Message), mti: "0101" });
      }
      responses.push(answer);
    }

    const approved = responses.filter((r) => r.fields[39] === "00").length;
    const declined = responses.filter((r) => r.fields[39] === "51").length;
    expect({ approved, declined }).toEqual({ approved: 150, declined: 50 });
    // A repeat sent while its original was in flight got the original's decision, or a 96 when it
    // too was not decided; never a second, different decision.
    repeated.forEach((response, i) => {
      if (response.fields[39] !== "96") expect(response).toEqual(responses[i * 10]);
    });
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(0n);
    expect(await balance(db.pool, issuer.tenantId, gatewayAccounts.holds("EUR"))).toBe(150_000n);
    const holds = await db.pool.query("SELECT 1 FROM transfer WHERE tenant_id = $1 AND kind = 'card_hold'", [issuer.tenantId]);
    expect(holds.rowCount).toBe(150);
  });

  it("holds exactly what the balance covers with 64 authorizations in flight while the projection folds, and balances equal the entries", async () => {
    const pan = testPan("401300", 1); // a BIN of its own: a BIN routes to one tenant
    const spender = await givenIssuer(db.pool, keys, { name: "issuer-64", pans: [pan], balanceMinor: 30_000n, accountId: "cust-64" });
    // 4 more connections (a peer may hold 8: docs/decisions/0022), 16 requests in flight on each.
    const wide = await Promise.all(Array.from({ length: 4 }, () => connectClient(endpoint)));
    let authorizing = true;
    const projector = (async () => {
      while (authorizing) await advanceProjection(db.pool, spender.tenantId);
    })();
    try {
      // 64 at once: 4 connections x 16 in flight; 120 holds of 10.00 against 300.00.
      const responses = await runConcurrently(120, 64, (i) => (wide[i % 4] as SchemeClient).request(
        cardRequest({ pan, amountMinor: 1_000n, stan: 5_000 + i, terminal: `T64${String(i % 16).padStart(5, "0")}` })));
      const codes = responses.map((r) => r.fields[39]);
      expect({ approved: codes.filter((c) => c === "00").length, declined: codes.filter((c) => c === "51").length }).toEqual({ approved: 30, declined: 90 });
    } finally {
      authorizing = false;
      await projector;
      await Promise.all(wide.map((c) => c.close()));
    }
    expect(await balance(db.pool, spender.tenantId, spender.accountId)).toBe(0n);
    expect(await entrySums(db.pool, spender.tenantId, spender.accountId)).toEqual({ debitsMinor: 30_000n, creditsMinor: 30_000n });
    const holds = await entrySums(db.pool, spender.tenantId, gatewayAccounts.holds("EUR"));
    expect(await balance(db.pool, spender.tenantId, gatewayAccounts.holds("EUR"))).toBe(holds.creditsMinor - holds.debitsMinor);
  }, 600_000); // waits for 120 responses, however busy the machine
});
