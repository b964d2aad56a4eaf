import type { Queryable } from "../db/pool.ts";

/** The balance of a tenant's suspense accounts, summed per currency, at the end of one day. */
export interface SuspenseBalanceOfDay { day: string; currency: string; balanceMinor: bigint }

/**
 * The suspense balance (credits minus debits of every suspense account: money received that no
 * account was found for) at the end of each of the last `days` days by value date, today (UTC)
 * included, per currency the suspense accounts have entries in; oldest day first.
 */
export async function suspenseBalancePerDay(
  db: Queryable, tenantId: string, days: number,
): Promise<SuspenseBalanceOfDay[]> {
  const { rows } = await db.query<{ day: string; currency: string; balance_minor: string }>(
    `WITH moves AS (
       SELECT e.currency, e.value_date,
              sum(CASE WHEN e.direction = 'C' THEN e.amount_minor ELSE -e.amount_minor END) AS net
         FROM ledger_entry e
         JOIN account a ON a.tenant_id = e.tenant_id AND a.account_id = e.account_id
        WHERE e.tenant_id = $1 AND a.kind = 'suspense'
        GROUP BY 1, 2),
     days AS (
       SELECT (now() AT TIME ZONE 'UTC')::date - n AS day FROM generate_series(0, $2 - 1) AS n)
     SELECT to_char(d.day, 'YYYY-MM-DD') AS day, c.currency,
            (SELECT coalesce(sum(m.net), 0) FROM moves m
              WHERE m.currency = c.currency AND m.value_date <= d.day)::text AS balance_minor
       FROM days d CROSS JOIN (SELECT DISTINCT currency FROM moves) AS c
      ORDER BY c.currency, d.day`,
    [tenantId, days]);
  return rows.map((r) => ({
    day: r.day, currency: r.currency, balanceMinor: BigInt(r.balance_minor),
  }));
}
