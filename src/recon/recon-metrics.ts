import type { Queryable } from "../db/pool.ts";
import { reconOldestOpenDifferenceSeconds, reconOpenDifferences } from "../observability/metrics.ts";

const reasons = ["theirs_only", "ours_only", "amount_differs", "date_outside_window", "duplicate_on_their_side", "foreign_currency"] as const;

/** Open differences by reason and the age of the oldest, read from the table (one statement). */
export async function refreshReconMetrics(db: Queryable, tenantId: string): Promise<void> {
  const { rows } = await db.query<{ reason: string; open: number; oldest_seconds: number }>(
    `SELECT reason, count(*)::int AS open, extract(epoch FROM now() - min(first_seen_at))::int AS oldest_seconds
       FROM recon_difference WHERE tenant_id = $1 AND state = 'open' GROUP BY reason`,
    [tenantId],
  );
  const byReason = new Map(rows.map((r) => [r.reason, r]));
  for (const reason of reasons) reconOpenDifferences.set({ tenant: tenantId, reason }, byReason.get(reason)?.open ?? 0);
  reconOldestOpenDifferenceSeconds.set({ tenant: tenantId }, Math.max(0, ...rows.map((r) => r.oldest_seconds)));
}
