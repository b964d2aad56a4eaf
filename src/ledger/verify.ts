import { limits } from "../config/limits.ts";
import type { Pool, PoolClient, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import {
  checkpointProblems, checkpointedTenants, collectFreshEntries, collectTotals, freshAccountProblems,
  freshCounts, freshSettlementNetProblems, unbalancedFreshTransfers, writeCheckpoints,
} from "./verify-checkpoint.ts";
import type { VerifyProblem } from "./verify-problem.ts";

export type { VerifyProblem } from "./verify-problem.ts";

export type VerifyMode = "full" | "incremental";

export interface VerifyOptions {
  /**
   * full (the default): every entry, and each tenant's latest checkpoint against them;
   * incremental: the transfers new since each tenant's latest checkpoint, and every account's
   * balance against the checkpoint's sums plus theirs (docs/decisions/0089).
   */
  mode?: VerifyMode;
  /** When nothing is found, write a checkpoint for every tenant (the CLI does). */
  writeCheckpoint?: boolean;
}

export interface VerifyReport {
  ok: boolean;
  mode: VerifyMode;
  tenants: number;
  accounts: number;
  transfers: number;
  entries: number;
  /** Transfers and entries read one by one beyond the tenants' checkpoints. */
  newSinceCheckpoint: { transfers: number; entries: number };
  /** Tenants that had a checkpoint to start from (incremental) or to check (full). */
  tenantsWithCheckpoint: number;
  checkpointsWritten: number;
  problems: VerifyProblem[];
  problemsMax: number;
}

const PROBLEMS_MAX = 1_000; // enough to act on; the counts say how bad it is beyond that

/**
 * Full: recomputes every balance from the entries and checks: each transfer balances per
 * currency with at least two legs; every account's balance as read (folded sums plus delta rows)
 * equals the sums of its entries; no customer account is negative; the net per transfer kept for
 * each settlement account (what a reconciliation run reads as our side) equals its entries; and
 * each tenant's latest checkpoint holds the sums of the entries visible to it.
 * Incremental: the same checks over the transfers new since each tenant's checkpoint, with every
 * account's balance against the checkpoint's sums plus the new entries'.
 * One REPEATABLE READ transaction, so one snapshot: exact while postings and the projector run.
 * Given a client, it runs in that client's transaction (which must be open), and its temporary
 * tables go with that transaction.
 */
export async function verifyLedger(db: Pool | PoolClient, options: VerifyOptions = {}): Promise<VerifyReport> {
  const work = (tx: Tx) => verifyIn(tx, options.mode ?? "full", options.writeCheckpoint ?? false);
  if ("totalCount" in db) {
    return withTransaction(db, work, {
      isolation: "repeatable read",
      // No JIT: the incremental run's statements are index probes the planner overprices, and
      // compiling them costs more than running them.
      localSettings: { statement_timeout: limits.ledger.verifyStatementTimeoutMs, jit: "off" },
    });
  }
  return work(db as unknown as Tx);   // a client inside its caller's transaction
}

async function verifyIn(tx: Tx, mode: VerifyMode, writeCheckpoint: boolean): Promise<VerifyReport> {
  await collectFreshEntries(tx, mode === "full");
  if (mode === "full") await collectTruth(tx);
  const totals = await collectTotals(tx, mode);
  const accounts = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM account");
  const problems = mode === "full" ? await fullProblems(tx) : await incrementalProblems(tx);
  const ok = problems.length === 0;
  return {
    ok, mode, tenants: totals.tenants, accounts: accounts.rows[0]?.n ?? 0,
    transfers: totals.transfers, entries: totals.entries,
    newSinceCheckpoint: await freshCounts(tx),
    tenantsWithCheckpoint: await checkpointedTenants(tx),
    checkpointsWritten: ok && writeCheckpoint ? await writeCheckpoints(tx, mode) : 0,
    problems: problems.slice(0, PROBLEMS_MAX),
    problemsMax: PROBLEMS_MAX,
  };
}

async function fullProblems(tx: Tx): Promise<VerifyProblem[]> {
  return [
    ...(await unbalancedTransfers(tx)),
    ...(await projectionMismatches(tx)),
    ...(await negativeCustomerBalances(tx)),
    ...(await settlementNetMismatches(tx)),
    ...(await checkpointProblems(tx, PROBLEMS_MAX)),
  ];
}

async function incrementalProblems(tx: Tx): Promise<VerifyProblem[]> {
  return [
    ...(await unbalancedFreshTransfers(tx, PROBLEMS_MAX)),
    ...(await freshAccountProblems(tx, PROBLEMS_MAX)),
    ...(await freshSettlementNetProblems(tx, PROBLEMS_MAX)),
  ];
}

/** verify_truth: the sums of every entry per account, read once for the full run's checks. */
async function collectTruth(tx: Tx): Promise<void> {
  await tx.query("DROP TABLE IF EXISTS pg_temp.verify_truth");
  await tx.query(
    `CREATE TEMP TABLE verify_truth ON COMMIT DROP AS
     SELECT tenant_id, account_id, count(*) AS entries,
            coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0)::numeric AS debits,
            coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)::numeric AS credits
       FROM ledger_entry GROUP BY tenant_id, account_id`);
}

/** Transfers with fewer than two legs, or whose debits and credits differ in a currency. */
async function unbalancedTransfers(db: Tx): Promise<VerifyProblem[]> {
  const unbalanced = await db.query<{ tenant_id: string; transfer_key: string; detail: string }>(
    `SELECT t.tenant_id, t.transfer_key,
            coalesce(string_agg(DISTINCT s.currency || ' D' || s.debits || ' C' || s.credits, ', '), 'no entries') AS detail
       FROM transfer t
       LEFT JOIN (
         SELECT tenant_id, transfer_key, currency,
                sum(amount_minor) FILTER (WHERE direction = 'D') AS debits,
                sum(amount_minor) FILTER (WHERE direction = 'C') AS credits,
                count(*) AS legs
           FROM ledger_entry GROUP BY tenant_id, transfer_key, currency
       ) s ON s.tenant_id = t.tenant_id AND s.transfer_key = t.transfer_key
      GROUP BY t.tenant_id, t.transfer_key
     HAVING coalesce(sum(s.legs), 0) < 2
         OR bool_or(coalesce(s.debits, 0) <> coalesce(s.credits, 0))
      LIMIT $1`,
    [PROBLEMS_MAX],
  );
  return unbalanced.rows.map((row) => ({
    code: "LEDGER_TRANSFER_UNBALANCED_STORED", tenantId: row.tenant_id, transferKey: row.transfer_key, message: `transfer ${row.transfer_key} does not balance: ${row.detail}`,
  }));
}

/** The balance a read gives (folded sums plus delta rows) against the entries themselves, in one statement: one snapshot. */
async function projectionMismatches(db: Tx): Promise<VerifyProblem[]> {
  const projection = await db.query<{ tenant_id: string; account_id: string; projected_debits: string; projected_credits: string; debits: string; credits: string }>(
    `WITH truth AS (SELECT tenant_id, account_id, debits, credits FROM verify_truth), projected AS (
       SELECT tenant_id, account_id, sum(debits_minor) AS debits, sum(credits_minor) AS credits
         FROM (SELECT tenant_id, account_id, debits_minor, credits_minor FROM account_balance
               UNION ALL
               SELECT tenant_id, account_id, debits_minor, credits_minor FROM balance_delta) parts
        GROUP BY tenant_id, account_id
     )
     SELECT coalesce(p.tenant_id, t.tenant_id) AS tenant_id, coalesce(p.account_id, t.account_id) AS account_id,
            coalesce(p.debits, 0)::text AS projected_debits, coalesce(p.credits, 0)::text AS projected_credits,
            coalesce(t.debits, 0)::text AS debits, coalesce(t.credits, 0)::text AS credits
       FROM projected p
       FULL JOIN truth t ON t.tenant_id = p.tenant_id AND t.account_id = p.account_id
      WHERE coalesce(p.debits, 0) <> coalesce(t.debits, 0) OR coalesce(p.credits, 0) <> coalesce(t.credits, 0)
      ORDER BY 1, 2 LIMIT $1`,
    [PROBLEMS_MAX],
  );
  return projection.rows.map((row) => ({
    code: "LEDGER_PROJECTION_MISMATCH", tenantId: row.tenant_id, accountId: row.account_id,
    message: `account ${row.account_id}: projection D${row.projected_debits} C${row.projected_credits}, entries D${row.debits} C${row.credits}`,
  }));
}

/** Customer accounts whose entries sum below zero. */
async function negativeCustomerBalances(db: Tx): Promise<VerifyProblem[]> {
  const negative = await db.query<{ tenant_id: string; account_id: string; balance: string }>(
    `SELECT a.tenant_id, a.account_id, (t.credits - t.debits)::text AS balance
       FROM account a JOIN verify_truth t ON t.tenant_id = a.tenant_id AND t.account_id = a.account_id
      WHERE a.kind = 'customer' AND t.credits < t.debits
      ORDER BY 1, 2 LIMIT $1`,
    [PROBLEMS_MAX],
  );
  return negative.rows.map((row) => ({
    code: "LEDGER_NEGATIVE_CUSTOMER_BALANCE", tenantId: row.tenant_id, accountId: row.account_id, message: `customer account ${row.account_id} is negative: ${row.balance}`,
  }));
}

/**
 * settlement_transfer_net (migration 0022) against the entries: a row for exactly each
 * (settlement account, value date, transfer) with entries, holding their debits minus credits.
 */
async function settlementNetMismatches(db: Tx): Promise<VerifyProblem[]> {
  const mismatches = await db.query<{ tenant_id: string; account_id: string; transfer_key: string; kept: string | null; entries: string | null }>(
    `WITH truth AS (
       SELECT e.tenant_id, e.account_id, e.value_date, e.transfer_key,
              sum(CASE e.direction WHEN 'D' THEN e.amount_minor ELSE -e.amount_minor END) AS signed_minor
         FROM ledger_entry e JOIN account a ON a.tenant_id = e.tenant_id AND a.account_id = e.account_id
        WHERE a.kind = 'settlement'
        GROUP BY e.tenant_id, e.account_id, e.value_date, e.transfer_key
     )
     SELECT coalesce(n.tenant_id, t.tenant_id) AS tenant_id, coalesce(n.account_id, t.account_id) AS account_id,
            coalesce(n.transfer_key, t.transfer_key) AS transfer_key, n.signed_minor::text AS kept, t.signed_minor::text AS entries
       FROM settlement_transfer_net n
       FULL JOIN truth t ON t.tenant_id = n.tenant_id AND t.account_id = n.account_id AND t.value_date = n.value_date AND t.transfer_key = n.transfer_key
      WHERE n.signed_minor IS DISTINCT FROM t.signed_minor
      ORDER BY 1, 2, 3 LIMIT $1`,
    [PROBLEMS_MAX],
  );
  return mismatches.rows.map((row) => ({
    code: "LEDGER_SETTLEMENT_NET_MISMATCH", tenantId: row.tenant_id, accountId: row.account_id, transferKey: row.transfer_key,
    message: `settlement account ${row.account_id}, transfer ${row.transfer_key}: net kept ${row.kept ?? "none"}, entries ${row.entries ?? "none"}`,
  }));
}

export interface LedgerStats {
  transfersByKind: Record<string, number>;
  accountsByKind: Record<string, number>;
  entries: number;
}

export async function ledgerStats(db: Queryable): Promise<LedgerStats> {
  const transfers = await db.query<{ kind: string; n: bigint }>("SELECT kind, count(*) AS n FROM transfer GROUP BY kind ORDER BY kind");
  const accounts = await db.query<{ kind: string; n: bigint }>("SELECT kind, count(*) AS n FROM account GROUP BY kind ORDER BY kind");
  const entries = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM ledger_entry");
  return {
    transfersByKind: Object.fromEntries(transfers.rows.map((r) => [r.kind, Number(r.n)])),
    accountsByKind: Object.fromEntries(accounts.rows.map((r) => [r.kind, Number(r.n)])),
    entries: Number(entries.rows[0]?.n ?? 0n),
  };
}
