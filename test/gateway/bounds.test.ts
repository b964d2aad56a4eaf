import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { cardRequest, networkRequest } from "../support/scheme-simulator.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { connectClient, givenIssuer, startTestEndpoint, testKeys, testPan } from "./support.ts";

describe("the scheme endpoint's bounds, each one past its limit", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  const pan = testPan("411111", 5);

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    await givenIssuer(db.pool, keys, { name: "bounds-issuer", pans: [pan], balanceMinor: 10_000n });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("holds at most connectionsMax connections: one past it evicts the link idle the longest, and both others keep serving", async () => {
    const endpoint = await startTestEndpoint(db.pool, keys, undefined, { connectionsMax: 2 });
    try {
      const quietest = await connectClient(endpoint);
      const other = await connectClient(endpoint);
      expect((await other.request(networkRequest("301", 1))).fields[39]).toBe("00");
      // Every slot holds a signed-on link: the newcomer takes the slot of the one quiet the longest
      // (docs/decisions/0064), which is closed.
      const beyond = await connectClient(endpoint);
      await quietest.closed;
      for (const [i, client] of [other, beyond].entries()) expect((await client.request(networkRequest("301", i + 2))).fields[39]).toBe("00");
      await Promise.all([other, beyond].map((c) => c.close()));
    } finally {
      await endpoint.close();
    }
  });

  it("holds messages beyond inflightPerConnectionMax until a slot frees, and answers every one", async () => {
    const endpoint = await startTestEndpoint(db.pool, keys, undefined, { inflightPerConnectionMax: 1 });
    const client = await connectClient(endpoint);
    try {
      const responses = await Promise.all([1, 2, 3].map((stan) => client.request(cardRequest({ pan, amountMinor: 10n, stan }))));
      expect(responses.map((r) => r.fields[39])).toEqual(["00", "00", "00"]);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("reads a frame of exactly frameBytesMax and closes the stream at a header announcing one byte more", async () => {
    const frameBytesMax = 64;
    const endpoint = await startTestEndpoint(db.pool, keys, undefined, { frameBytesMax });
    const client = await connectClient(endpoint);
    try {
      client.sendFrameBody(Buffer.from("0800".padEnd(frameBytesMax, "Z"), "latin1"));
      expect((await client.nextUnmatched()).fields[39]).toBe("30");
      client.sendFrameBody(Buffer.from("0800".padEnd(frameBytesMax + 1, "Z"), "latin1"));
      await client.closed;
    } finally {
      await endpoint.close();
    }
  });

  it("closes a connection that stays silent past idleTimeoutMs", async () => {
    const endpoint = await startTestEndpoint(db.pool, keys, undefined, { idleTimeoutMs: 100 });
    try {
      const socket = connect({ host: "127.0.0.1", port: endpoint.port });
      const closed = await new Promise<boolean>((resolve) => socket.once("close", () => resolve(true)));
      expect(closed).toBe(true);
    } finally {
      await endpoint.close();
    }
  });
});
