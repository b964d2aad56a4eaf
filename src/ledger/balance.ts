import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { projectionLagEntries } from "../observability/metrics.ts";
import { signedBalance, type AccountKind } from "./account-kinds.ts";

export interface Balance {
  accountId: string;
  kind: AccountKind;
  currency: string;
  debitsMinor: bigint;
  creditsMinor: bigint;
  balanceMinor: bigint;  // signed by the account's normal side
}

/**
 * Projection (sums up to the watermark) plus the entries after it, read in one statement so
 * both halves come from one snapshot.
 */
const BALANCE_SQL = `
  WITH state AS (SELECT watermark FROM balance_projection_state WHERE tenant_id = $1)
  SELECT a.kind, a.currency,
         (coalesce(p.debits_minor, 0) + coalesce(t.debits_minor, 0))::text AS debits_minor,
         (coalesce(p.credits_minor, 0) + coalesce(t.credits_minor, 0))::text AS credits_minor
    FROM account a
    LEFT JOIN account_balance p ON p.tenant_id = a.tenant_id AND p.account_id = a.account_id
    LEFT JOIN LATERAL (
      SELECT sum(e.amount_minor) FILTER (WHERE e.direction = 'D') AS debits_minor,
             sum(e.amount_minor) FILTER (WHERE e.direction = 'C') AS credits_minor
        FROM ledger_entry e
       WHERE e.tenant_id = a.tenant_id AND e.account_id = a.account_id
         AND e.xact_id >= coalesce((SELECT watermark FROM state), '0'::xid8)
    ) t ON true
   WHERE a.tenant_id = $1 AND a.account_id = $2`;

export async function balanceOf(tx: Queryable, tenantId: string, accountId: string): Promise<Balance | undefined> {
  const { rows } = await tx.query<{ kind: AccountKind; currency: string; debits_minor: string; credits_minor: string }>(BALANCE_SQL, [tenantId, accountId]);
  const row = rows[0];
  if (!row) return undefined;
  const debitsMinor = BigInt(row.debits_minor);
  const creditsMinor = BigInt(row.credits_minor);
  return { accountId, kind: row.kind, currency: row.currency, debitsMinor, creditsMinor, balanceMinor: signedBalance(row.kind, debitsMinor, creditsMinor) };
}

/**
 * Locks the account row (FOR UPDATE) and returns its balance: callers that must not overdraw
 * an account serialize on this lock for the rest of their transaction. Holds are ledger
 * transfers to a holds account, so the balance is already net of them.
 */
export async function availableBalanceForUpdate(tx: Queryable, tenantId: string, accountId: string): Promise<bigint> {
  await tx.query("SELECT 1 FROM account WHERE tenant_id = $1 AND account_id = $2 FOR UPDATE", [tenantId, accountId]);
  const balance = await balanceOf(tx, tenantId, accountId);
  assert(balance, `account ${accountId} exists after it was checked`);
  return balance.balanceMinor;
}

export interface ProjectionAdvance {
  steps: number;
  entriesFolded: bigint;
}

/**
 * The projection's horizon: our own transaction id, or the oldest transaction still running IN
 * THIS DATABASE if that is older. Transaction ids are cluster-wide, so the snapshot's xmin would
 * let a long transaction in any other database of the server stall the projection; only a
 * transaction connected to this database can write ledger entries here. A transaction that ends
 * between the snapshot and the activity lookup has ended: the later fold statement sees it.
 */
const HORIZON_SQL = `
  SELECT watermark::text,
         least(pg_current_xact_id(),
               (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
                 WHERE x::xid IN (SELECT backend_xid FROM pg_stat_activity
                                   WHERE datname = current_database() AND backend_xid IS NOT NULL)))::text AS horizon
    FROM balance_projection_state WHERE tenant_id = $1 FOR UPDATE`;

/**
 * Folds entries into account_balance up to the horizon (above), in steps of at most
 * projectionBatchEntriesMax entries. Entries of one transaction share its xact_id, so a step
 * never splits a transaction. Only entries of finished transactions are folded: a transaction
 * that commits late is picked up by a later step.
 */
export async function advanceProjection(pool: Pool, tenantId: string, options: { stepsMax?: number; batchEntriesMax?: number } = {}): Promise<ProjectionAdvance> {
  const stepsMax = options.stepsMax ?? 1_000;
  const batch = options.batchEntriesMax ?? limits.ledger.projectionBatchEntriesMax;
  const result: ProjectionAdvance = { steps: 0, entriesFolded: 0n };
  for (; result.steps < stepsMax; result.steps++) {
    const folded = await withTransaction(pool, async (tx) => {
      await tx.query("INSERT INTO balance_projection_state (tenant_id, watermark) VALUES ($1, '1'::xid8) ON CONFLICT DO NOTHING", [tenantId]);
      // Our own id first: any transaction that gets an id after the horizon query below has a
      // larger one than ours, so it cannot hide under the horizon.
      await tx.query("SELECT pg_current_xact_id()");
      const state = await tx.query<{ watermark: string; horizon: string }>(HORIZON_SQL, [tenantId]);
      const row = state.rows[0];
      assert(row, "projection state row exists after insert");
      // The step's end: the horizon, or earlier if more than `batch` entries lie before it.
      const cut = await tx.query<{ cut: string | null }>(
        `SELECT least($2::xid8, (SELECT min(xact_id) FROM (
                  SELECT xact_id FROM ledger_entry WHERE tenant_id = $1 AND xact_id >= $3::xid8
                   ORDER BY xact_id OFFSET $4 LIMIT 1) n))::text AS cut`,
        [tenantId, row.horizon, row.watermark, batch],
      );
      let end = cut.rows[0]?.cut ?? row.horizon;
      if (end === row.watermark) {
        // One transaction holds more than `batch` entries: fold it whole rather than stall.
        const next = await tx.query<{ next: string | null }>(
          "SELECT min(xact_id)::text AS next FROM ledger_entry WHERE tenant_id = $1 AND xact_id > $2::xid8 AND xact_id < $3::xid8",
          [tenantId, row.watermark, row.horizon],
        );
        end = next.rows[0]?.next ?? row.horizon;
      }
      if (end === row.watermark) return 0n;
      const summed = await tx.query<{ entries: string }>(
        `WITH step AS (
           SELECT account_id,
                  coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0) AS debits_minor,
                  coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0) AS credits_minor,
                  count(*) AS entries
             FROM ledger_entry
            WHERE tenant_id = $1 AND xact_id >= $2::xid8 AND xact_id < $3::xid8
            GROUP BY account_id
         ), folded AS (
           INSERT INTO account_balance AS b (tenant_id, account_id, debits_minor, credits_minor)
           SELECT $1, account_id, debits_minor, credits_minor FROM step
           ON CONFLICT (tenant_id, account_id) DO UPDATE
             SET debits_minor = b.debits_minor + excluded.debits_minor,
                 credits_minor = b.credits_minor + excluded.credits_minor
         )
         SELECT coalesce(sum(entries), 0)::text AS entries FROM step`,
        [tenantId, row.watermark, end],
      );
      await tx.query("UPDATE balance_projection_state SET watermark = $2::xid8, advanced_at = now() WHERE tenant_id = $1", [tenantId, end]);
      return BigInt(summed.rows[0]?.entries ?? "0");
    });
    if (folded === 0n) break;
    result.entriesFolded += folded;
  }
  const lag = await pool.query<{ lag: bigint }>(
    `SELECT count(*) AS lag FROM ledger_entry WHERE tenant_id = $1
        AND xact_id >= coalesce((SELECT watermark FROM balance_projection_state WHERE tenant_id = $1), '0'::xid8)`,
    [tenantId],
  );
  projectionLagEntries.set({ tenant: tenantId }, Number(lag.rows[0]?.lag ?? 0n));
  return result;
}

export async function tenantsWithAccounts(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ tenant_id: string }>("SELECT DISTINCT tenant_id FROM account ORDER BY tenant_id");
  return rows.map((r) => r.tenant_id);
}
