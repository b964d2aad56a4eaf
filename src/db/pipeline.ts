import type { Queryable } from "./pool.ts";

/**
 * Two statements of one transaction sent back to back, without waiting for the first one's answer
 * (one round trip on a pipelining client; docs/decisions/0051). PostgreSQL still runs them one
 * after the other, so the second starts, and under READ COMMITTED takes its snapshot, only once
 * the first has finished. Use it only where the second does not need the first one's result.
 * The first one's failure wins: the second then only reports that the transaction is aborted.
 * On a client that does not pipeline, the second is sent after the first's answer.
 */
export async function sentTogether<A, B>(db: Queryable, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  if ((db as { pipeline?: boolean }).pipeline !== true) return [await first(), await second()];
  const [a, b] = await Promise.allSettled([first(), second()]);
  if (a.status === "rejected") throw a.reason;
  if (b.status === "rejected") throw b.reason;
  return [a.value, b.value];
}
