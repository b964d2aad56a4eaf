import { createHash, randomBytes } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";

/**
 * A tenant's API keys (docs/decisions/0097): several per tenant, each named and scoped, shown in
 * full once and stored as a hash, listed by prefix, revoked, or rotated with an overlap window.
 * A revocation or rotation notifies every serve process on API_KEY_CHANNEL in the transaction
 * that makes it, so each drops the key from its cache when the change commits.
 */
export const apiKeyScopes = ["read_only", "payments", "files", "operations"] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
/** What a request needs: reading, or one kind of change. */
export type KeyAction = "read" | Exclude<ApiKeyScope, "read_only">;

/** The PostgreSQL channel a key's change is announced on; the payload is the key's id. */
export const API_KEY_CHANNEL = "clearline_api_key";

/** Every key reads; a change needs its own scope (a read_only key changes nothing). */
export function scopesAllow(scopes: readonly ApiKeyScope[], action: KeyAction): boolean {
  return action === "read" || scopes.includes(action);
}

export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

export type ApiKeyState = "active" | "expiring" | "expired" | "revoked";

export interface ApiKeyListing {
  keyId: string;
  name: string;
  prefix: string | null;
  scopes: ApiKeyScope[];
  state: ApiKeyState;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  replacedBy: string | null;
  lastUsedAt: Date | null;
}

export interface NewApiKey { key: ApiKeyListing; apiKey: string }

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/** What lists show of a key: "cl_" and 9 of its 43 random characters (54 bits: useless alone). */
const PREFIX_CHARS = 12;

/** A fresh key: its id, the secret shown once, and what is stored of it. */
export function mintApiKey(): { keyId: string; apiKey: string; prefix: string; hash: string } {
  const apiKey = `cl_${randomBytes(32).toString("base64url")}`;
  const keyId = `key_${randomBytes(10).toString("hex")}`;
  return { keyId, apiKey, prefix: apiKey.slice(0, PREFIX_CHARS), hash: hashApiKey(apiKey) };
}

export function checkKeyRequest(
  name: string, scopes: readonly string[],
): Result<ApiKeyScope[], Finding> {
  if (!NAME.test(name)) {
    return fail(finding("API_KEY_NAME_INVALID",
      "a key name is 1 to 63 letters, digits, '.', '_' or '-'", { field: "name" }));
  }
  const known = new Set<string>(apiKeyScopes);
  const unique = [...new Set(scopes)];
  if (unique.length === 0 || unique.some((scope) => !known.has(scope))
    || (unique.includes("read_only") && unique.length > 1)) {
    return fail(finding("API_KEY_SCOPES_INVALID",
      `scopes are one or more of ${apiKeyScopes.join(", ")}; read_only stands alone`,
      { field: "scopes" }));
  }
  return ok(unique as ApiKeyScope[]);
}

const LISTING_COLUMNS = `key_id, name, key_prefix, scopes, created_at, expires_at, revoked_at,
       replaced_by, last_used_at,
       CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
            WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired'
            WHEN expires_at IS NOT NULL THEN 'expiring'
            ELSE 'active' END AS state`;

interface ListingRow {
  key_id: string; name: string; key_prefix: string | null; scopes: ApiKeyScope[];
  state: ApiKeyState;
  created_at: Date; expires_at: Date | null; revoked_at: Date | null; replaced_by: string | null;
  last_used_at: Date | null;
}

const listing = (row: ListingRow): ApiKeyListing => ({
  keyId: row.key_id, name: row.name, prefix: row.key_prefix, scopes: row.scopes, state: row.state,
  createdAt: row.created_at, expiresAt: row.expires_at, revokedAt: row.revoked_at,
  replacedBy: row.replaced_by, lastUsedAt: row.last_used_at,
});

/** Creates a key for a tenant; the key is in the answer once and nowhere else. */
export async function createApiKey(
  db: Queryable, tenantId: string, request: { name: string; scopes: readonly string[] },
): Promise<Result<NewApiKey, Finding>> {
  const scopes = checkKeyRequest(request.name, request.scopes);
  if (!scopes.ok) return scopes;
  const minted = mintApiKey();
  const { rows } = await db.query<ListingRow>(
    `INSERT INTO api_key (tenant_id, key_id, name, key_prefix, key_hash, scopes)
     VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${LISTING_COLUMNS}`,
    [tenantId, minted.keyId, request.name, minted.prefix, minted.hash, scopes.value]);
  return ok({ key: listing(rows[0] as ListingRow), apiKey: minted.apiKey });
}

/** A tenant's keys, newest first, by prefix only: the stored hash and the key never leave. */
export async function listApiKeys(db: Queryable, tenantId: string): Promise<ApiKeyListing[]> {
  const { rows } = await db.query<ListingRow>(
    `SELECT ${LISTING_COLUMNS}
       FROM api_key
      WHERE tenant_id = $1
      ORDER BY created_at DESC, key_id
      LIMIT $2`, [tenantId, limits.http.apiKeysPerTenantMax]);
  return rows.map(listing);
}

/** A key named by its id or its listed prefix, read under a row lock inside `tx`. */
type NamedRow = ListingRow & { key_hash: string };

async function keyNamed(
  db: Queryable, tenantId: string, keyRef: string,
): Promise<Result<NamedRow, Finding>> {
  const { rows } = await db.query<NamedRow>(
    `SELECT ${LISTING_COLUMNS}, key_hash
       FROM api_key
      WHERE tenant_id = $1 AND (key_id = $2 OR key_prefix = $2)
      LIMIT 2
        FOR UPDATE`, [tenantId, keyRef]);
  const position = { field: "key" };
  if (rows.length > 1) {
    return fail(finding("API_KEY_AMBIGUOUS", `more than one key is named ${keyRef}`, position));
  }
  const row = rows[0];
  if (!row) return fail(finding("API_KEY_UNKNOWN", `no key ${keyRef} in this tenant`, position));
  return ok(row);
}

/** Revokes a key now (also one in its overlap window); every process is told at commit. */
export async function revokeApiKey(
  pool: Pool, tenantId: string, keyRef: string,
): Promise<Result<ApiKeyListing, Finding>> {
  return withTransaction(pool, async (tx) => {
    const named = await keyNamed(tx, tenantId, keyRef);
    if (!named.ok) return named;
    if (named.value.state === "revoked") return ok(listing(named.value));
    const { rows } = await tx.query<ListingRow>(
      `UPDATE api_key SET revoked_at = now()
        WHERE tenant_id = $1 AND key_id = $2
       RETURNING ${LISTING_COLUMNS}`, [tenantId, named.value.key_id]);
    // The release before 0033 reads a tenant's first key from tenant.api_key_hash.
    await tx.query(
      "UPDATE tenant SET api_key_hash = NULL WHERE tenant_id = $1 AND api_key_hash = $2",
      [tenantId, named.value.key_hash]);
    await tx.query("SELECT pg_notify($1, $2)", [API_KEY_CHANNEL, named.value.key_id]);
    return ok(listing(rows[0] as ListingRow));
  });
}

export interface Rotation { old: ApiKeyListing; created: NewApiKey }

/**
 * Makes a key with the same name and scopes in place of an active one; the old key keeps working
 * for `overlapMs` and is refused after (0: at once). Every process is told at commit.
 */
export async function rotateApiKey(
  pool: Pool, tenantId: string, keyRef: string, overlapMs: number,
): Promise<Result<Rotation, Finding>> {
  const overlapMsMax = limits.http.apiKeyOverlapMsMax;
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > overlapMsMax) {
    return fail(finding("API_KEY_OVERLAP_INVALID", `an overlap window is 0 to ${overlapMsMax} ms`,
      { field: "overlap" }));
  }
  return withTransaction(pool, async (tx) => {
    const named = await keyNamed(tx, tenantId, keyRef);
    if (!named.ok) return named;
    const old = named.value;
    if (old.state === "revoked" || old.state === "expired") {
      return fail(finding("API_KEY_REVOKED", `key ${old.key_id} no longer works`,
        { field: "key" }));
    }
    if (old.replaced_by !== null) {
      return fail(finding("API_KEY_ROTATED",
        `key ${old.key_id} was replaced by ${old.replaced_by}`, { field: "key" }));
    }
    const created = await createApiKey(tx, tenantId, { name: old.name, scopes: old.scopes });
    if (!created.ok) return created;
    const { rows } = await tx.query<ListingRow>(
      `UPDATE api_key
          SET expires_at = LEAST(coalesce(expires_at, 'infinity'),
                                 now() + $3 * interval '1 millisecond'),
              replaced_by = $4
        WHERE tenant_id = $1 AND key_id = $2
       RETURNING ${LISTING_COLUMNS}`, [tenantId, old.key_id, overlapMs, created.value.key.keyId]);
    await tx.query("SELECT pg_notify($1, $2)", [API_KEY_CHANNEL, old.key_id]);
    return ok({ old: listing(rows[0] as ListingRow), created: created.value });
  });
}
