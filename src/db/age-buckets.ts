import type { Queryable } from "./pool.ts";

/**
 * Open items of one table by age: how many are younger than boundsSeconds[0], then between each
 * bound and the next, then older than the last (bounds ascending). The owning service names its
 * table, its time column and its open condition; the bucketing is the same for every table.
 */
export async function openAgeCounts(
  db: Queryable,
  source: { table: string; since: string; where: string },
  params: { tenantId: string; boundsSeconds: readonly number[] },
): Promise<number[]> {
  const { rows } = await db.query<{ bucket: number; items: number }>(
    `SELECT width_bucket(extract(epoch FROM now() - ${source.since})::float8, $2::float8[])
              AS bucket,
            count(*)::int AS items
       FROM ${source.table}
      WHERE tenant_id = $1 AND ${source.where}
      GROUP BY 1`,
    [params.tenantId, params.boundsSeconds]);
  const counts = Array.from({ length: params.boundsSeconds.length + 1 }, () => 0);
  for (const row of rows) counts[row.bucket] = row.items;
  return counts;
}
