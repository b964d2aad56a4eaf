import pg from "pg";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { API_KEY_CHANNEL, hashApiKey, type ApiKeyScope } from "./api-keys.ts";
import type { Tenant } from "./tenants.ts";

/** Who a request is: its tenant, and the key it came with. */
export interface KeyHolder {
  tenant: Tenant;
  keyId: string;
  scopes: ApiKeyScope[];
}

interface CacheEntry { holder: KeyHolder; expiresAtMs: number }

interface KeyRow {
  tenant_id: string; name: string; key_id: string; scopes: ApiKeyScope[];
  works_ms: number | null; // how long the key still works; NULL: until revoked
}

/** What the authenticator reports of its listening connection (tests wait on these). */
export type ListenerEvent =
  | { kind: "listening" }
  | { kind: "lost"; reason: string }
  | { kind: "key_changed"; keyId: string };

export interface AuthenticatorOptions {
  now?: () => number;
  /** Opens the LISTEN connection; absent: a client of its own with the pool's settings. */
  connect?: () => Promise<pg.Client>;
  onEvent?: (event: ListenerEvent) => void;
}

/**
 * API key -> tenant, cached boundedly: every request authenticates (docs/decisions/0097).
 *
 * A revocation or rotation is announced by NOTIFY on API_KEY_CHANNEL when it commits; the
 * connection listening for it drops the key from this process's cache. The cache is trusted only
 * while that connection listens: lost, the cache is cleared and every request reads its key from
 * the database until LISTEN is back (and the cache is cleared again). A lookup caches its answer
 * only if no notification and no change of the connection came while it read, so a lookup that
 * raced a revocation cannot put the revoked key back.
 */
export class TenantAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastUseWrittenMs = new Map<string, number>();
  private readonly now: () => number;
  private listening = false;
  private epoch = 0;
  private stopped = false;
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly db: Pool, private readonly options: AuthenticatorOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Starts listening (and keeps doing so until stop). Until it listens, nothing is cached. */
  start(): void {
    this.running ??= this.listenLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.client?.end().catch(() => undefined);
    await this.running;
  }

  async authenticate(apiKey: string): Promise<KeyHolder | undefined> {
    const hash = hashApiKey(apiKey);
    const cached = this.listening ? this.cache.get(hash) : undefined;
    if (cached && cached.expiresAtMs > this.now()) {
      await this.noteUse(cached.holder);
      return cached.holder;
    }
    this.cache.delete(hash);
    const epochBefore = this.epoch;
    const listeningBefore = this.listening;
    const row = await this.lookUp(hash);
    if (!row) return undefined;
    const tenant = { tenantId: row.tenant_id, name: row.name };
    const holder = { tenant, keyId: row.key_id, scopes: row.scopes };
    if (listeningBefore && this.listening && this.epoch === epochBefore) {
      this.remember(hash, holder, row.works_ms);
    }
    await this.noteUse(holder);
    return holder;
  }

  private async lookUp(hash: string): Promise<KeyRow | undefined> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT k.tenant_id, t.name, k.key_id, k.scopes,
              (extract(epoch FROM k.expires_at - now()) * 1000)::float8 AS works_ms
         FROM api_key k JOIN tenant t ON t.tenant_id = k.tenant_id
        WHERE k.key_hash = $1
          AND k.revoked_at IS NULL
          AND (k.expires_at IS NULL OR k.expires_at > now())`, [hash]);
    return rows[0];
  }

  private remember(hash: string, holder: KeyHolder, worksMs: number | null): void {
    const nowMs = this.now();
    const ttlMs = Math.min(limits.http.tenantCacheTtlMs, worksMs ?? Number.POSITIVE_INFINITY);
    if (this.cache.size >= limits.http.tenantCacheEntriesMax) {
      this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(hash, { holder, expiresAtMs: nowMs + ttlMs });
  }

  /**
   * The key's last use, written at most once per apiKeyLastUseWriteIntervalMs by this process,
   * and only when the stored one is older than that (other processes write too). A failed write
   * costs the request nothing: the last use is a hint for people, not a control.
   */
  private async noteUse(holder: KeyHolder): Promise<void> {
    const intervalMs = limits.http.apiKeyLastUseWriteIntervalMs;
    const nowMs = this.now();
    const writtenMs = this.lastUseWrittenMs.get(holder.keyId);
    if (writtenMs !== undefined && nowMs - writtenMs < intervalMs) return;
    // Bounded as the cache is; forgetting only makes one more (conditional) write.
    if (this.lastUseWrittenMs.size >= limits.http.tenantCacheEntriesMax) {
      this.lastUseWrittenMs.clear();
    }
    this.lastUseWrittenMs.set(holder.keyId, nowMs);
    await this.db.query(
      `UPDATE api_key SET last_used_at = now()
        WHERE tenant_id = $1 AND key_id = $2
          AND (last_used_at IS NULL OR last_used_at < now() - $3 * interval '1 millisecond')`,
      [holder.tenant.tenantId, holder.keyId, intervalMs]).catch(() => undefined);
  }

  private keyChanged(keyId: string): void {
    this.epoch++;
    for (const [hash, entry] of this.cache) {
      if (entry.holder.keyId === keyId) this.cache.delete(hash);
    }
    this.options.onEvent?.({ kind: "key_changed", keyId });
  }

  private lost(reason: string): void {
    this.listening = false;
    this.epoch++;
    this.cache.clear();
    this.options.onEvent?.({ kind: "lost", reason });
  }

  private async openClient(): Promise<pg.Client> {
    if (this.options.connect) return this.options.connect();
    const { connectionString, host, port, user, password, database } = this.db.options;
    const where = connectionString === undefined
      ? { host, port, user, password, database } : { connectionString };
    const client = new pg.Client({
      ...where,
      application_name: "clearline-api-key-listener",
      connectionTimeoutMillis: limits.db.connectTimeoutMs,
      query_timeout: limits.http.apiKeyListenerProbeTimeoutMs,
      keepAlive: true,
    });
    await client.connect();
    return client;
  }

  private async listenLoop(): Promise<void> {
    while (!this.stopped) {
      const reason = await this.listenOnce().catch((error: unknown) =>
        error instanceof Error ? error.message : String(error));
      if (this.stopped) break;
      this.lost(reason);
      await this.sleep(limits.http.apiKeyListenerRetryMs);
    }
    this.listening = false;
    this.cache.clear();
  }

  /** One LISTEN connection, until it is lost or stop(); resolves with why it ended. */
  private async listenOnce(): Promise<string> {
    const client = await this.openClient();
    this.client = client;
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return "stopped";
    }
    const ended = new Promise<string>((resolve) => {
      client.on("error", (error) => resolve(error.message));
      client.on("end", () => resolve("the connection ended"));
    });
    client.on("notification", (message) => {
      if (message.channel === API_KEY_CHANNEL && message.payload) this.keyChanged(message.payload);
    });
    try {
      await client.query(`LISTEN ${API_KEY_CHANNEL}`);
      // Whatever was cached before this LISTEN may have missed a notification.
      this.epoch++;
      this.cache.clear();
      this.listening = true;
      this.options.onEvent?.({ kind: "listening" });
      return await Promise.race([ended, this.probeUntilFailed(client)]);
    } finally {
      this.listening = false;
      this.client = undefined;
      await client.end().catch(() => undefined);
    }
  }

  /** A silent partition does not end a connection: a probe that fails or times out does. */
  private async probeUntilFailed(client: pg.Client): Promise<string> {
    for (;;) {
      await this.sleep(limits.http.apiKeyListenerHeartbeatMs);
      if (this.stopped) return "stopped";
      if (this.client !== client) return "replaced";
      try {
        await client.query("SELECT 1");
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    }
  }

  /** Waits `ms`, or less if stop() is called meanwhile; the wait alone keeps no process alive. */
  private async sleep(ms: number): Promise<void> {
    let wake: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms).unref();
      wake = () => { clearTimeout(timer); resolve(); };
      this.wake = wake;
    });
    // A probe of a connection already lost may wake after the retry's wait began: not its wake.
    if (this.wake === wake) this.wake = undefined;
  }
}
