import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { addCard, routeCard } from "../../src/cards/cards.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenIssuer, testKeys, testPan, type Issuer } from "../gateway/support.ts";

describe("inbound card routing (a BIN's tenant is remembered, a card never is)", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let issuer: Issuer;

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    issuer = await givenIssuer(db.pool, keys, { name: "routing", pans: [testPan("482100", 1)], balanceMinor: 0n });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("routes a card to its tenant and its account with the account's currency", async () => {
    expect(await routeCard(db.pool, keys, testPan("482100", 1))).toMatchObject({ kind: "card", tenantId: issuer.tenantId, accountId: issuer.accountId, accountCurrency: "EUR" });
  });

  it("routes a card registered after its BIN was remembered, and calls an unregistered one of that BIN an unknown card", async () => {
    expect(await routeCard(db.pool, keys, testPan("482100", 2))).toMatchObject({ kind: "unknown_card", tenantId: issuer.tenantId });
    await withTransaction(db.pool, async (tx) => {
      const added = await addCard(tx, keys, { tenantId: issuer.tenantId, pan: testPan("482100", 2), accountId: issuer.accountId });
      expect(added.ok).toBe(true);
    });
    expect(await routeCard(db.pool, keys, testPan("482100", 2))).toMatchObject({ kind: "card", accountId: issuer.accountId });
  });

  it("does not remember an unknown BIN: once a card of it is registered, the next message routes", async () => {
    const pan = testPan("482200", 1);
    expect(await routeCard(db.pool, keys, pan)).toEqual({ kind: "unknown_issuer" });
    await withTransaction(db.pool, async (tx) => {
      const added = await addCard(tx, keys, { tenantId: issuer.tenantId, pan, accountId: issuer.accountId });
      expect(added.ok).toBe(true);
    });
    expect(await routeCard(db.pool, keys, pan)).toMatchObject({ kind: "card", tenantId: issuer.tenantId });
  });
});
