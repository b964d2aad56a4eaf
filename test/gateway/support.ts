import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { Writable } from "node:stream";
import { CardKeys } from "../../src/cards/card-key.ts";
import { addCard, withLuhnCheckDigit } from "../../src/cards/cards.ts";
import { cardIssuer } from "../../src/cards/index.ts";
import type { Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { limits } from "../../src/config/limits.ts";
import { startInboundEndpoint, type InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import type { Codec } from "../../src/gateway/framed-socket.ts";
import { networkRequest, SchemeClient, SchemeServer } from "../support/scheme-simulator.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { postTransfer } from "../../src/ledger/post-transfers.ts";
import { createLogger, type Logger } from "../../src/observability/logger.ts";
import { defaultFraming, iso87AsciiDictionary } from "../../src/protocols/iso8583/index.ts";
import { createTenant } from "../../src/tenants/tenants.ts";

export const codec: Codec = { dictionary: iso87AsciiDictionary, framing: defaultFraming, frameBytesMax: limits.iso8583.frameBytesMax };

export function testKeys(): CardKeys {
  return new CardKeys(randomBytes(32));
}

/** A logger whose lines are kept in memory, for tests that read what was logged. */
export function capturedLogger(level = "debug"): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  return { logger: createLogger({ level, destination }), lines };
}

export interface Issuer {
  tenantId: string;
  accountId: string;
}

/** A tenant with a funded EUR customer account and the given cards linked to it. */
export async function givenIssuer(pool: Pool, keys: CardKeys, options: { name: string; pans: string[]; balanceMinor: bigint; accountId?: string }): Promise<Issuer> {
  const tenant = await createTenant(pool, options.name);
  if (!tenant.ok) throw new Error(tenant.error.message);
  const tenantId = tenant.value.tenantId;
  const accountId = options.accountId ?? "cust-1";
  await withTransaction(pool, async (tx) => {
    for (const [id, kind] of [[accountId, "customer"], ["settlement-EUR", "settlement"]] as const) {
      const opened = await openAccount(tx, { tenantId, accountId: id, kind, currency: "EUR" });
      if (!opened.ok) throw new Error(opened.error.message);
    }
    if (options.balanceMinor > 0n) {
      const funded = await postTransfer(tx, {
        tenantId, transferKey: `fund:${accountId}`, kind: "funding", valueDate: "2026-12-01",
        legs: [
          { accountId: "settlement-EUR", direction: "D", amountMinor: options.balanceMinor, currency: "EUR" },
          { accountId, direction: "C", amountMinor: options.balanceMinor, currency: "EUR" },
        ],
      });
      if (!funded.ok) throw new Error(funded.error.message);
    }
    for (const pan of options.pans) {
      const added = await addCard(tx, keys, { tenantId, pan, accountId });
      if (!added.ok) throw new Error(added.error.message);
    }
  });
  return { tenantId, accountId };
}

export async function balance(pool: Pool, tenantId: string, accountId: string): Promise<bigint> {
  const found = await balanceOf(pool, tenantId, accountId);
  if (!found) throw new Error(`no account ${accountId}`);
  return found.balanceMinor;
}

export async function startTestEndpoint(pool: Pool, keys: CardKeys, logger: Logger = capturedLogger().logger, overrides: Partial<{ connectionsMax: number; inflightPerConnectionMax: number; idleTimeoutMs: number; frameBytesMax: number }> = {}): Promise<InboundEndpoint> {
  return startInboundEndpoint({ issuer: cardIssuer({ pool, keys }), logger }, {
    host: "127.0.0.1", port: 0,
    codec: { ...codec, frameBytesMax: overrides.frameBytesMax ?? codec.frameBytesMax },
    connectionsMax: overrides.connectionsMax ?? limits.iso8583.inboundConnectionsMax,
    inflightPerConnectionMax: overrides.inflightPerConnectionMax ?? limits.iso8583.inboundInflightPerConnectionMax,
    idleTimeoutMs: overrides.idleTimeoutMs ?? limits.iso8583.inboundIdleTimeoutMs,
  });
}

/** A scheme client that signed on (0800/001), as a scheme does before any financial message. */
export async function connectClient(endpoint: InboundEndpoint, options: { localAddress?: string } = {}): Promise<SchemeClient> {
  const client = patient(await SchemeClient.connect("127.0.0.1", endpoint.port, codec, options));
  const signOn = await client.request(networkRequest("001", 1));
  if (signOn.fields[39] !== "00") throw new Error(`sign-on answered ${String(signOn.fields[39])}`);
  return client;
}

/**
 * The simulator's waits default to 15 s, a deadline a busy machine can miss (issue 17: 200
 * concurrent authorizations failed so). A test waits for the answer itself: the longest delay a
 * Node timer takes stands for "no deadline", the test's timeout is the last guard.
 */
export const untilAnsweredMs = 2_147_483_647;

/** This client's request and nextUnmatched wait for the answer, however long it takes. */
export function patient(client: SchemeClient): SchemeClient {
  const request = client.request.bind(client);
  const nextUnmatched = client.nextUnmatched.bind(client);
  client.request = (message, timeoutMs = untilAnsweredMs) => request(message, timeoutMs);
  client.nextUnmatched = (timeoutMs = untilAnsweredMs) => nextUnmatched(timeoutMs);
  return client;
}

/** A scheme simulator whose waitFor waits for the messages, however long they take. */
export async function listenPatientScheme(): Promise<SchemeServer> {
  const scheme = await SchemeServer.listen(0, codec);
  const waitFor = scheme.waitFor.bind(scheme);
  scheme.waitFor = (predicate, timeoutMs = untilAnsweredMs) => waitFor(predicate, timeoutMs);
  return scheme;
}

/** Luhn-valid test PANs under BINs of our own choosing (no real issuer). */
export function testPan(bin: string, serial: number): string {
  return withLuhnCheckDigit(`${bin}${String(serial).padStart(9, "0")}`);
}

/**
 * Polls `check` until it holds: a wait for an asynchronous effect (a row, a flag), however long a
 * busy machine takes. No deadline of its own: the test's timeout is the last guard. `what` names
 * the effect when a check fails on the way.
 */
export async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (;;) {
    let holds: boolean;
    try {
      holds = await check();
    } catch (error) {
      throw new Error(`while waiting for ${what}: ${String(error)}`, { cause: error });
    }
    if (holds) return;
    // Each check waits for its own answer; the pause only spares the database a tight loop.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What a describe block of scheme-endpoint tests stands on, filled in by its beforeAll. */
export interface SchemeScene {
  db: TestDatabase;
  keys: CardKeys;
  endpoint: InboundEndpoint;
  client: SchemeClient;
  issuer: Issuer;
}

/**
 * A scratch database, an issuer with funded cards, the scheme endpoint on a real socket and one
 * connected scheme client, for the describe block that calls this (its hooks are registered here).
 */
export function useSchemeScene(issuer: { name: string; pans: string[]; balanceMinor: bigint }): SchemeScene {
  const scene = {} as SchemeScene;
  beforeAll(async () => {
    scene.db = await createTestDatabase();
    scene.keys = testKeys();
    scene.issuer = await givenIssuer(scene.db.pool, scene.keys, issuer);
    scene.endpoint = await startTestEndpoint(scene.db.pool, scene.keys);
    scene.client = await connectClient(scene.endpoint);
  });
  afterAll(async () => {
    await scene.client.close();
    await scene.endpoint.close();
    await scene.db.drop();
  });
  return scene;
}
