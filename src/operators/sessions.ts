import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import type { Operator, OperatorRole } from "./operators.ts";

export interface OperatorSession {
  operator: Operator;
  csrfToken: string;
  expiresAt: Date;
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Opens a session: the cookie token (returned, never stored) and its CSRF token. */
export async function openSession(db: Queryable, operator: Operator, now: Date = new Date()): Promise<{ token: string; csrfToken: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const csrfToken = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now.getTime() + limits.http.operatorSessionTtlMs);
  await db.query("INSERT INTO operator_session (session_hash, operator_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4)",
    [hashOf(token), operator.operatorId, csrfToken, expiresAt]);
  return { token, csrfToken, expiresAt };
}

/**
 * The live session of a cookie token; an expired one is as good as none (and is deleted), and so
 * is one of a disabled operator (docs/decisions/0106).
 */
export async function findSession(db: Queryable, token: string): Promise<OperatorSession | undefined> {
  const { rows } = await db.query<{ operator_id: string; tenant_id: string; name: string; role: OperatorRole; csrf_token: string; expires_at: Date; live: boolean }>(
    `SELECT o.operator_id, o.tenant_id, o.name, o.role, s.csrf_token, s.expires_at, s.expires_at > now() AS live
      FROM operator_session s JOIN operator o ON o.operator_id = s.operator_id
     WHERE s.session_hash = $1 AND o.disabled_at IS NULL`, [hashOf(token)]);
  const row = rows[0];
  if (!row) return undefined;
  if (!row.live) {
    await closeSession(db, token);
    return undefined;
  }
  return { operator: { operatorId: row.operator_id, tenantId: row.tenant_id, name: row.name, role: row.role }, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

export async function closeSession(db: Queryable, token: string): Promise<void> {
  await db.query("DELETE FROM operator_session WHERE session_hash = $1", [hashOf(token)]);
}

/** Constant-time comparison: the token must not leak byte by byte through response times. */
export function csrfTokenMatches(session: OperatorSession, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(session.csrfToken);
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
