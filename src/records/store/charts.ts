import { openAgeCounts } from "../../db/age-buckets.ts";
import type { Queryable } from "../../db/pool.ts";

/** Records of a tenant's files per day (UTC, of their decision) and outcome. */
export interface OutcomesOfDay { day: string; outcome: string; records: number }

/** The record outcomes of the last `days` days (today included), oldest day first. */
export async function outcomesPerDay(
  db: Queryable, tenantId: string, days: number,
): Promise<OutcomesOfDay[]> {
  const { rows } = await db.query<OutcomesOfDay>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, outcome,
            count(*)::int AS records
       FROM record_outcome
      WHERE tenant_id = $1
        AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                          - make_interval(days => $2 - 1)
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [tenantId, days]);
  return rows;
}

/**
 * Open review items by age: how many are younger than boundsSeconds[0], then between each bound
 * and the next, then older than the last bound (bounds ascending).
 */
export async function openReviewAgeCounts(
  db: Queryable, tenantId: string, boundsSeconds: readonly number[],
): Promise<number[]> {
  return openAgeCounts(db, { table: "record_review", since: "created_at", where: "state = 'open'" },
    { tenantId, boundsSeconds });
}
