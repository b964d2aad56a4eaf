import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { addCard } from "../../src/cards/cards.ts";
import { limits } from "../../src/config/limits.ts";
import { openTransaction, withTransaction } from "../../src/db/transaction.ts";
import { cardIssuer, handleInbound } from "../../src/cards/inbound.ts";
import { startInboundEndpoint, type InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import { OriginalsGroupCommit, type OriginalsGroupCommitBounds } from "../../src/cards/originals-group-commit.ts";
import { cardRequest, type SchemeClient } from "../support/scheme-simulator.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { postTransfer } from "../../src/ledger/post-transfers.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { iso8583OriginalBatches } from "../../src/observability/metrics-gateway.ts";
import { pack, type Message } from "../../src/protocols/iso8583/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balance, capturedLogger, codec, connectClient, givenIssuer, startTestEndpoint, testKeys, testPan, type Issuer } from "../gateway/support.ts";

const transmission = "1203101500";

async function batches(outcome: "committed" | "fallback"): Promise<number> {
  return (await iso8583OriginalBatches.get()).values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
}

/** Resolves when `condition` holds; checks again on each turn of the event loop (no deadline: the test's timeout bounds it). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The response as sent on the wire, with field 2 (the only field that differs between the two issuers by construction) set to one value. */
function wireOf(response: Message): string {
  const fields = { ...response.fields };
  if (fields[2] !== undefined) fields[2] = "4000000000000002";
  const packed = pack({ ...response, fields }, codec.dictionary);
  if (!packed.ok) throw new Error(packed.error.code);
  return packed.value.toString("hex");
}

/** A tenant under its own BIN: a funded card, a card on an empty account, a card whose account the test can lock. */
interface World extends Issuer {
  bin: string;
  pan: (serial: number) => string;
}

async function givenWorld(db: TestDatabase, keys: CardKeys, name: string, bin: string): Promise<World> {
  const pan = (serial: number) => testPan(bin, serial);
  const issuer = await givenIssuer(db.pool, keys, { name, pans: [pan(1)], balanceMinor: 5_000n });
  await withTransaction(db.pool, async (tx) => {
    for (const [accountId, serial] of [["poor", 2], ["blocker", 3], ["other", 4], ["second-blocker", 5]] as const) {
      expect((await openAccount(tx, { tenantId: issuer.tenantId, accountId, kind: "customer", currency: "EUR" })).ok).toBe(true);
      expect((await addCard(tx, keys, { tenantId: issuer.tenantId, pan: pan(serial), accountId })).ok).toBe(true);
    }
    // The blocker cards' accounts hold enough for their own authorizations.
    const funded = await postTransfer(tx, {
      tenantId: issuer.tenantId, transferKey: "fund:blockers", kind: "funding", valueDate: "2026-12-01",
      legs: [
        { accountId: "settlement-EUR", direction: "D", amountMinor: 30_000n, currency: "EUR" },
        ...(["blocker", "other", "second-blocker"] as const).map((accountId) => ({ accountId, direction: "C" as const, amountMinor: 10_000n, currency: "EUR" })),
      ],
    });
    expect(funded.ok).toBe(true);
  });
  return { ...issuer, bin, pan };
}

/** An endpoint whose writer runs one batch at a time (bounds given), with one signed-on client. */
async function startBatchingEndpoint(db: TestDatabase, keys: CardKeys, bounds: Partial<OriginalsGroupCommitBounds> = {}): Promise<{ writer: OriginalsGroupCommit; endpoint: InboundEndpoint; client: SchemeClient }> {
  const writer = new OriginalsGroupCommit(db.pool, { batchMessagesMax: 64, batchesInFlightMax: 1, queueMax: 64, ...bounds });
  const endpoint = await startInboundEndpoint({ issuer: cardIssuer({ pool: db.pool, keys, originalsWriter: writer }), logger: capturedLogger().logger }, {
    host: "127.0.0.1", port: 0, codec, connectionsMax: limits.iso8583.inboundConnectionsMax,
    inflightPerConnectionMax: limits.iso8583.inboundInflightPerConnectionMax, idleTimeoutMs: limits.iso8583.inboundIdleTimeoutMs,
  });
  return { writer, endpoint, client: await connectClient(endpoint) };
}

/** Holds `accountId`'s row locked in a transaction of the test's own, so a batch that posts against it waits. */
async function lockAccount(db: TestDatabase, tenantId: string, accountId: string): Promise<{ commit(): Promise<void> }> {
  const lock = await openTransaction(db.pool);
  await lock.tx.query("SELECT 1 FROM account WHERE tenant_id = $1 AND account_id = $2 FOR UPDATE", [tenantId, accountId]);
  return lock;
}

/** Whether some session of this database waits on a row or advisory lock (a batch reached the test's lock). */
async function someoneWaitsOnALock(db: TestDatabase): Promise<boolean> {
  const { rows } = await db.pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
  return rows.length > 0;
}

describe("group-committed ISO 8583 originals", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 16 });
    keys = testKeys();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("approves exactly 10 of 64 authorizations in flight on one connection against an account funded for 10, declines the rest 51, and the ledger verifies", async () => {
    const pan = testPan("471000", 1);
    const issuer = await givenIssuer(db.pool, keys, { name: "issuer-ten", pans: [pan], balanceMinor: 10_000n, accountId: "cust-ten" });
    const endpoint = await startTestEndpoint(db.pool, keys);
    const client = await connectClient(endpoint);
    const committedBefore = await batches("committed");
    try {
      const responses = await Promise.all(Array.from({ length: 64 }, (_, i) =>
        client.request(cardRequest({ pan, amountMinor: 1_000n, stan: 100 + i, transmission, terminal: "TEN00001" }))));
      const codes = responses.map((r) => r.fields[39]);
      expect({ approved: codes.filter((c) => c === "00").length, declined: codes.filter((c) => c === "51").length }).toEqual({ approved: 10, declined: 54 });
      expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(0n);
      expect(await batches("committed")).toBeLessThan(committedBefore + 64); // some of them shared a transaction
      const report = await verifyLedger(db.pool);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("answers a batch of an approval, a decline for funds, a repeat, other content under a known key, an unknown card and a currency not served byte for byte as the same messages sent one at a time", async () => {
    const batched = await givenWorld(db, keys, "issuer-batched", "472100");
    const alone = await givenWorld(db, keys, "issuer-alone", "472200");
    const { writer, endpoint, client } = await startBatchingEndpoint(db, keys);
    // The same messages in both worlds; only the BIN of the PAN differs.
    const earlier = (w: World) => [
      cardRequest({ pan: w.pan(1), amountMinor: 1_000n, stan: 1, transmission }),
      cardRequest({ pan: w.pan(1), amountMinor: 1_000n, stan: 2, transmission }),
    ];
    const blocker = (w: World) => cardRequest({ pan: w.pan(3), amountMinor: 100n, stan: 9, transmission });
    const mixed = (w: World) => [
      cardRequest({ pan: w.pan(1), amountMinor: 1_500n, stan: 3, transmission }),                      // 00, held
      cardRequest({ pan: w.pan(2), amountMinor: 1_500n, stan: 4, transmission }),                      // 51, the empty account
      { ...cardRequest({ pan: w.pan(1), amountMinor: 1_000n, stan: 1, transmission }), mti: "0101" },  // the stored answer to stan 1
      cardRequest({ pan: w.pan(1), amountMinor: 9_000n, stan: 2, transmission }),                      // 94, stan 2 with another amount
      cardRequest({ pan: w.pan(7), amountMinor: 1_000n, stan: 5, transmission }),                      // 14, a card nobody registered
      cardRequest({ pan: w.pan(1), amountMinor: 1_000n, stan: 6, transmission, currencyNumeric: "840" }), // 12, USD on a EUR account
    ];
    try {
      for (const message of earlier(batched)) expect((await client.request(message)).fields[39]).toBe("00");
      const committedBefore = await batches("committed");
      const lock = await lockAccount(db, batched.tenantId, "blocker");
      const blocked = client.request(blocker(batched));
      await until(() => writer.batchesInFlight === 1);
      const answers = Promise.all(mixed(batched).map((message) => client.request(message)));
      await until(() => writer.queued === 6);
      await lock.commit();
      const together = [await blocked, ...(await answers)];
      expect(await batches("committed")).toBe(committedBefore + 2); // the blocker's batch, then the six in one

      const deps = { pool: db.pool, keys };   // no writer: each message decided alone, one after another
      for (const message of earlier(alone)) await handleInbound(deps, message, { connection: "alone" });
      const one: Message[] = [];
      for (const message of [blocker(alone), ...mixed(alone)]) one.push((await handleInbound(deps, message, { connection: "alone" })).response as Message);

      expect(together.map(wireOf)).toEqual(one.map(wireOf));
      expect(together.map((r) => r.fields[39])).toEqual(["00", "00", "51", "00", "94", "14", "12"]);
      const stored = async (tenantId: string) => (await db.pool.query(
        "SELECT natural_key, outcome, response_code, response_mti, response_fields, effect_key, amount_minor::text FROM iso8583_inbound WHERE tenant_id = $1 ORDER BY natural_key", [tenantId])).rows;
      expect(await stored(batched.tenantId)).toEqual(await stored(alone.tenantId));
      expect(await balance(db.pool, batched.tenantId, "cust-1")).toBe(await balance(db.pool, alone.tenantId, "cust-1"));
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("decides every message of a batch whose transaction fails again alone, and each gets the answer it gets alone", async () => {
    const world = await givenWorld(db, keys, "issuer-fallback", "473100");
    const { writer, endpoint, client } = await startBatchingEndpoint(db, keys);
    const rrn = "120310777777";
    try {
      const fallbackBefore = await batches("fallback");
      const first = await lockAccount(db, world.tenantId, "blocker");
      const second = await lockAccount(db, world.tenantId, "second-blocker");
      const blocked = client.request(cardRequest({ pan: world.pan(3), amountMinor: 100n, stan: 20, transmission }));
      await until(() => writer.batchesInFlight === 1);
      const answers = Promise.all([
        cardRequest({ pan: world.pan(1), amountMinor: 1_000n, stan: 21, transmission, rrn }),   // its RRN is taken while its batch waits
        cardRequest({ pan: world.pan(1), amountMinor: 1_000n, stan: 22, transmission }),
        cardRequest({ pan: world.pan(5), amountMinor: 1_000n, stan: 23, transmission }),        // waits on the second lock
      ].map((message) => client.request(message)));
      await until(() => writer.queued === 3);
      await first.commit();
      // The batch of three has read what was answered under its keys and RRNs and waits on the second lock.
      await until(async () => writer.queued === 0 && (await someoneWaitsOnALock(db)));
      // Meanwhile another gateway process answers another message with the same RRN (another STAN, another card).
      const interloper = await handleInbound({ pool: db.pool, keys }, cardRequest({ pan: world.pan(4), amountMinor: 500n, stan: 99, transmission, rrn }), { connection: "elsewhere" });
      expect(interloper.response?.fields[39]).toBe("00");
      await second.commit();

      expect((await blocked).fields[39]).toBe("00");
      // The batch's insert of the RRN's answer meets the committed one: the batch fails, nothing of it commits, each message runs alone.
      expect((await answers).map((r) => r.fields[39])).toEqual(["94", "00", "00"]);
      expect(await batches("fallback")).toBe(fallbackBefore + 1);
      const holds = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'card_hold'", [world.tenantId]);
      expect(holds.rows[0].n).toBe(4); // blocker, stan 22, stan 23, the interloper: stan 21 holds nothing
      expect(await balance(db.pool, world.tenantId, "cust-1")).toBe(4_000n);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("splits the messages waiting behind a batch into batches of at most the bound: three behind a bound of two go as two and one", async () => {
    const world = await givenWorld(db, keys, "issuer-split", "474100");
    const { writer, endpoint, client } = await startBatchingEndpoint(db, keys, { batchMessagesMax: 2 });
    try {
      const committedBefore = await batches("committed");
      const lock = await lockAccount(db, world.tenantId, "blocker");
      const blocked = client.request(cardRequest({ pan: world.pan(3), amountMinor: 100n, stan: 30, transmission }));
      await until(() => writer.batchesInFlight === 1);
      const answers = Promise.all([31, 32, 33].map((stan) => client.request(cardRequest({ pan: world.pan(1), amountMinor: 100n, stan, transmission }))));
      await until(() => writer.queued === 3);
      await lock.commit();
      expect([await blocked, ...(await answers)].map((r) => r.fields[39])).toEqual(["00", "00", "00", "00"]);
      expect(await batches("committed")).toBe(committedBefore + 3); // the blocker's, then two, then one
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("decides a message alone when the queue is at its bound, without waiting for the batch in flight", async () => {
    const world = await givenWorld(db, keys, "issuer-queue", "475100");
    const { writer, endpoint, client } = await startBatchingEndpoint(db, keys, { queueMax: 1 });
    try {
      const lock = await lockAccount(db, world.tenantId, "blocker");
      const blocked = client.request(cardRequest({ pan: world.pan(3), amountMinor: 100n, stan: 40, transmission }));
      await until(() => writer.batchesInFlight === 1);
      const queued = client.request(cardRequest({ pan: world.pan(1), amountMinor: 100n, stan: 41, transmission }));
      await until(() => writer.queued === 1);
      // One past the bound: answered while the blocker's batch still waits on the lock the test holds.
      expect((await client.request(cardRequest({ pan: world.pan(1), amountMinor: 100n, stan: 42, transmission }))).fields[39]).toBe("00");
      expect(writer.queued).toBe(1);
      await lock.commit();
      expect([(await blocked).fields[39], (await queued).fields[39]]).toEqual(["00", "00"]);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it("never puts two messages with one natural key in one batch: an original and its repeat sent together get one decision", async () => {
    const world = await givenWorld(db, keys, "issuer-twins", "476100");
    const { writer, endpoint, client } = await startBatchingEndpoint(db, keys);
    try {
      const lock = await lockAccount(db, world.tenantId, "blocker");
      const blocked = client.request(cardRequest({ pan: world.pan(3), amountMinor: 100n, stan: 50, transmission }));
      await until(() => writer.batchesInFlight === 1);
      const original = cardRequest({ pan: world.pan(1), amountMinor: 700n, stan: 51, transmission });
      const answers = Promise.all([client.request(original), client.request({ ...original, mti: "0101" })]);
      await until(() => writer.queued === 2);
      await lock.commit();
      const [first, repeat] = await answers;
      expect((await blocked).fields[39]).toBe("00");
      expect(first?.fields[39]).toBe("00");
      expect(repeat?.fields).toEqual(first?.fields);
      expect(await balance(db.pool, world.tenantId, "cust-1")).toBe(4_300n);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });
});
