import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";

/**
 * Stopping a source is the first step of an incident: a partner's drop folders and SFTP pollers
 * (`partner:<partner id>`) take no new file, the ISO 8583 endpoint answers the tenant's financial
 * messages with 91 (issuer inoperative: the scheme stands in, nothing is decided here). Work
 * already taken finishes. A pause is a row; resuming deletes it (its history is the incident's).
 */
export type SourceName = `partner:${string}` | "iso8583";

export interface SourcePause {
  source: SourceName;
  pausedBy: string;
  reason: string;
  pausedAt: string;
}

const cache = new Map<string, { paused: boolean; readAt: number }>();
const CACHE_ENTRIES_MAX = 10_000; // tenants x sources one process watches; beyond it, no caching

function cacheKey(tenantId: string, source: SourceName): string {
  return `${tenantId}\u0000${source}`;
}

export async function pauseSource(db: Queryable, tenantId: string, source: SourceName, operator: string, reason: string): Promise<SourcePause> {
  await db.query(
    "INSERT INTO source_pause (tenant_id, source, paused_by, reason) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, source) DO NOTHING",
    [tenantId, source, operator, reason],
  );
  cache.delete(cacheKey(tenantId, source));
  const paused = await listPausedSources(db, tenantId);
  return paused.find((p) => p.source === source) as SourcePause;
}

/** Resumes a source; true when it was paused. */
export async function resumeSource(db: Queryable, tenantId: string, source: SourceName): Promise<boolean> {
  const deleted = await db.query("DELETE FROM source_pause WHERE tenant_id = $1 AND source = $2", [tenantId, source]);
  cache.delete(cacheKey(tenantId, source));
  return (deleted.rowCount ?? 0) > 0;
}

export async function listPausedSources(db: Queryable, tenantId: string): Promise<SourcePause[]> {
  const { rows } = await db.query<{ source: SourceName; paused_by: string; reason: string; paused_at: Date }>(
    "SELECT source, paused_by, reason, paused_at FROM source_pause WHERE tenant_id = $1 ORDER BY source", [tenantId]);
  return rows.map((r) => ({ source: r.source, pausedBy: r.paused_by, reason: r.reason, pausedAt: r.paused_at.toISOString() }));
}

/** Whether the source is paused, read at most once per pauseCacheMs per process. */
export async function isSourcePaused(db: Queryable, tenantId: string, source: SourceName, nowMs = Date.now()): Promise<boolean> {
  const key = cacheKey(tenantId, source);
  const cached = cache.get(key);
  if (cached && nowMs - cached.readAt < limits.recon.pauseCacheMs) return cached.paused;
  const { rows } = await db.query("SELECT 1 FROM source_pause WHERE tenant_id = $1 AND source = $2", [tenantId, source]);
  if (cache.size < CACHE_ENTRIES_MAX || cache.has(key)) cache.set(key, { paused: rows.length > 0, readAt: nowMs });
  return rows.length > 0;
}
