import type { Queryable } from "../../src/db/pool.ts";

/** Runs `count` tasks with at most `concurrency` in flight; the results in task order. */
export async function runConcurrently<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) results[i] = await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** The truth a balance must equal: the sums of an account's committed entries, read directly. */
export async function entrySums(db: Queryable, tenantId: string, accountId: string): Promise<{ debitsMinor: bigint; creditsMinor: bigint }> {
  const { rows } = await db.query<{ d: string; c: string }>(
    `SELECT coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0)::text AS d,
            coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)::text AS c
       FROM ledger_entry WHERE tenant_id = $1 AND account_id = $2`,
    [tenantId, accountId],
  );
  return { debitsMinor: BigInt(rows[0]?.d ?? "0"), creditsMinor: BigInt(rows[0]?.c ?? "0") };
}
