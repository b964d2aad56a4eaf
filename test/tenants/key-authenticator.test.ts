import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import type { Pool } from "../../src/db/pool.ts";
import {
  createApiKey, revokeApiKey, rotateApiKey,
} from "../../src/tenants/api-keys.ts";
import { TenantAuthenticator, type ListenerEvent } from "../../src/tenants/key-authenticator.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The key cache of a serve process (src/tenants/key-authenticator.ts, decision 0097): a
 * revocation reaches it by NOTIFY, not by a timer, and it trusts nothing it cached while its
 * LISTEN connection was lost. The clock is frozen, so no entry ever ages out: a refusal here
 * comes from a notification or from the connection's state, never from the time-to-live.
 */
describe("the API key cache", () => {
  let db: TestDatabase;
  const started: TenantAuthenticator[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((a) => a.stop()));
  });
  afterAll(async () => {
    await db.drop();
  });

  /** A started authenticator on a frozen clock, its listener events, and a wait for one. */
  function listening(options: { pool?: Pool; connect?: () => Promise<pg.Client>; nowMs?: () => number } = {}) {
    const events: ListenerEvent[] = [];
    const authenticator = new TenantAuthenticator(options.pool ?? db.pool, {
      now: options.nowMs ?? (() => 1_000_000),
      onEvent: (event) => events.push(event),
      ...(options.connect ? { connect: options.connect } : {}),
    });
    started.push(authenticator);
    authenticator.start();
    const seen = (match: (e: ListenerEvent) => boolean, after = 0) =>
      eventually(() => events.slice(after).some(match));
    return { authenticator, events, seen };
  }
  const isListening = (e: ListenerEvent) => e.kind === "listening";
  const changed = (keyId: string) => (e: ListenerEvent) => e.kind === "key_changed" && e.keyId === keyId;

  async function givenKey(scopes = ["payments"]) {
    const tenant = await createTenant(db.pool, `t-${randomUUID().slice(0, 8)}`);
    if (!tenant.ok) throw new Error(tenant.error.message);
    const key = await createApiKey(db.pool, tenant.value.tenantId, { name: "k", scopes });
    if (!key.ok) throw new Error(key.error.message);
    return { tenantId: tenant.value.tenantId, keyId: key.value.key.keyId, apiKey: key.value.apiKey };
  }
  /** A revocation as a row change only, with no notification: what a cache could miss. */
  const revokeSilently = (keyId: string) =>
    db.pool.query("UPDATE api_key SET revoked_at = now() WHERE key_id = $1", [keyId]);
  const restoreSilently = (keyId: string) =>
    db.pool.query("UPDATE api_key SET revoked_at = NULL WHERE key_id = $1", [keyId]);

  it("drops a revoked key from the cache when the revocation's notification arrives", async () => {
    const { authenticator, seen } = listening();
    await seen(isListening);
    const key = await givenKey();
    expect(await authenticator.authenticate(key.apiKey)).toMatchObject({ keyId: key.keyId });
    // Cached: a change the cache is not told of is not seen.
    await revokeSilently(key.keyId);
    expect(await authenticator.authenticate(key.apiKey)).toMatchObject({ keyId: key.keyId });
    await restoreSilently(key.keyId);

    await revokeApiKey(db.pool, key.tenantId, key.keyId);
    await seen(changed(key.keyId));
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();
  });

  it("caches nothing until it listens, and does not trust its cache once the connection is lost", async () => {
    let open: () => void = () => undefined;
    let gate = Promise.resolve();
    const applicationName = `test-key-listener-${randomUUID().slice(0, 8)}`;
    const connect = async () => {
      await gate;
      const client = new pg.Client({ connectionString: db.url, application_name: applicationName });
      await client.connect();
      return client;
    };
    const { authenticator, events, seen } = listening({ connect });
    await seen(isListening);
    const key = await givenKey();
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined();
    await revokeSilently(key.keyId);
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined(); // from the cache

    // The listening connection dies, and is held from coming back.
    gate = new Promise((resolve) => { open = resolve; });
    const mark = events.length;
    await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [applicationName]);
    await seen((e) => e.kind === "lost", mark);
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();
    await restoreSilently(key.keyId);
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined(); // read, not cached
    await revokeSilently(key.keyId);
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();

    const relisten = events.length;
    open();
    await seen(isListening, relisten);
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();
  });

  it("does not cache a key it read while the key's revocation was announced", async () => {
    const key = await givenKey();
    let revokeDuringLookup = false;
    let waitForNotification: () => Promise<void> = async () => undefined;
    // The real pool; the test revokes the key between the lookup's answer and its caching.
    const racing = new Proxy(db.pool, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<Pool["query"]>) => {
          const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          if (revokeDuringLookup && String(args[0]).includes("FROM api_key k")) {
            revokeDuringLookup = false;
            await revokeApiKey(db.pool, key.tenantId, key.keyId);
            await waitForNotification();
          }
          return result;
        };
      },
    });
    const { authenticator, seen } = listening({ pool: racing });
    await seen(isListening);
    waitForNotification = () => seen(changed(key.keyId));
    revokeDuringLookup = true;
    // Read before the revocation committed: this request passes, as a request just before it would.
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined();
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();
  });

  it("ends a rotated key's cached life with its overlap window, not after", async () => {
    let nowMs = 5_000_000;
    const { authenticator, seen } = listening({ nowMs: () => nowMs });
    await seen(isListening);
    const key = await givenKey();
    const rotated = await rotateApiKey(db.pool, key.tenantId, key.keyId, 10_000);
    expect(rotated.ok).toBe(true);
    await seen(changed(key.keyId));
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined();
    // The window ends in the database; this process's clock reaches it 10 s after the lookup.
    await db.pool.query("UPDATE api_key SET expires_at = now() - interval '1 ms' WHERE key_id = $1",
      [key.keyId]);
    nowMs += 9_000;
    expect(await authenticator.authenticate(key.apiKey)).toBeDefined();
    nowMs += 1_001;
    expect(await authenticator.authenticate(key.apiKey)).toBeUndefined();
  });

  it("writes a key's last use at most once per interval per process, and not over a recent one", async () => {
    let nowMs = 7_000_000;
    const authenticator = new TenantAuthenticator(db.pool, { now: () => nowMs });
    const key = await givenKey();
    const lastUse = async () => (await db.pool.query<{ at: Date | null }>(
      "SELECT last_used_at AS at FROM api_key WHERE key_id = $1", [key.keyId])).rows[0]?.at ?? null;
    await authenticator.authenticate(key.apiKey);
    const first = await lastUse();
    expect(first).not.toBeNull();

    await db.pool.query("UPDATE api_key SET last_used_at = NULL WHERE key_id = $1", [key.keyId]);
    nowMs += limits.http.apiKeyLastUseWriteIntervalMs - 1;
    await authenticator.authenticate(key.apiKey);
    expect(await lastUse()).toBeNull();
    nowMs += 1;
    await authenticator.authenticate(key.apiKey);
    const second = await lastUse();
    expect(second).not.toBeNull();

    // Another process's first request inside the interval leaves the stored time as it is.
    await new TenantAuthenticator(db.pool).authenticate(key.apiKey);
    expect(await lastUse()).toEqual(second);
  });
});
