import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { withTransaction } from "../db/transaction.ts";
import { projectionLagDeltas } from "../observability/metrics.ts";
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
 * The folded sums plus the account's delta rows not yet folded, in one statement, so both halves
 * come from one snapshot. Every committed entry is in exactly one of the two halves in every
 * snapshot (docs/decisions/0012-exact-balances-from-delta-rows.md).
 *
 * Each account of the list `accountIds` (a text[] expression) is probed by its primary key, and
 * kept when it meets `accountCondition` (on alias `a`): a LATERAL subquery behind OFFSET 0, so the
 * planner cannot turn the lookup into a scan of the tenant's accounts when it believes the tenant
 * has few (no statistics yet; docs/decisions/0052).
 */
const balancesSql = (accountIds: string, accountCondition = "true") => `
  SELECT a.account_id, a.kind, a.currency,
         (coalesce(p.debits_minor, 0) + coalesce(d.debits_minor, 0))::text AS debits_minor,
         (coalesce(p.credits_minor, 0) + coalesce(d.credits_minor, 0))::text AS credits_minor
    FROM (SELECT DISTINCT unnest(${accountIds})) AS w(account_id)
   CROSS JOIN LATERAL (
      SELECT a.account_id, a.kind, a.currency FROM account a
       WHERE a.tenant_id = $1 AND a.account_id = w.account_id AND ${accountCondition} OFFSET 0) a
    LEFT JOIN LATERAL (
      SELECT debits_minor, credits_minor FROM account_balance WHERE tenant_id = $1 AND account_id = a.account_id OFFSET 0) p ON true
    LEFT JOIN LATERAL (
      SELECT sum(debits_minor) AS debits_minor, sum(credits_minor) AS credits_minor
        FROM balance_delta
       WHERE tenant_id = $1 AND account_id = a.account_id
    ) d ON true`;
const BALANCES_SQL = balancesSql("$2::text[]");

interface BalanceRow { account_id: string; kind: AccountKind; currency: string; debits_minor: string; credits_minor: string }

function balanceOfRow(row: BalanceRow): Balance {
  const debitsMinor = BigInt(row.debits_minor);
  const creditsMinor = BigInt(row.credits_minor);
  return { accountId: row.account_id, kind: row.kind, currency: row.currency, debitsMinor, creditsMinor, balanceMinor: signedBalance(row.kind, debitsMinor, creditsMinor) };
}

export async function balancesOf(db: Queryable, tenantId: string, accountIds: readonly string[]): Promise<Map<string, Balance>> {
  const { rows } = await db.query<BalanceRow>(BALANCES_SQL, [tenantId, accountIds]);
  return new Map(rows.map((row) => [row.account_id, balanceOfRow(row)]));
}

export async function balanceOf(db: Queryable, tenantId: string, accountId: string): Promise<Balance | undefined> {
  return (await balancesOf(db, tenantId, [accountId])).get(accountId);
}

/**
 * Which accounts a posting locks before it spends them (post-transfers.ts): those of `debited`
 * whose kind is in `debitGuardedKinds`, and those of `credited` whose kind is in
 * `creditGuardedKinds`. $1 is the tenant; the four sets are $2..$5 in that order.
 * `LOCKED_ACCOUNT_IDS` is the list to probe; `lockedAccountsCondition(alias)` keeps, of the probed
 * rows, those to lock.
 */
export const LOCKED_ACCOUNT_IDS = "$2::text[] || $4::text[]";

export function lockedAccountsCondition(alias: string): string {
  return `((${alias}.account_id = ANY($2::text[]) AND ${alias}.kind = ANY($3::text[])) OR (${alias}.account_id = ANY($4::text[]) AND ${alias}.kind = ANY($5::text[])))`;
}

export interface LockedAccounts {
  debited: string[];
  debitGuardedKinds: string[];
  credited: string[];
  creditGuardedKinds: string[];
}

export function lockedAccountsParams(tenantId: string, locked: LockedAccounts): unknown[] {
  return [tenantId, locked.debited, locked.debitGuardedKinds, locked.credited, locked.creditGuardedKinds];
}

const LOCKED_BALANCES_SQL = balancesSql(LOCKED_ACCOUNT_IDS, lockedAccountsCondition("a"));

/**
 * The balances of the accounts a posting locks (`lockedAccountsCondition`), read in a statement
 * of its own sent right behind the locking one (src/db/pipeline.ts; docs/decisions/0051): under
 * READ COMMITTED its snapshot is taken when it starts, after the locking statement finished, so it
 * sees every transfer committed by an earlier holder of a lock. (Locking and reading in one
 * statement would not: its snapshot predates the wait; decision 0012.) Every debit of an account
 * that may not go negative takes this lock, so a balance read here can only grow until the caller
 * commits. Holds are ledger transfers, so it is net of them.
 */
export async function balancesOfLocked(tx: Tx, tenantId: string, locked: LockedAccounts): Promise<Map<string, bigint>> {
  const { rows } = await tx.query<BalanceRow>({ name: "clearline.ledger.balances-of-locked", text: LOCKED_BALANCES_SQL }, lockedAccountsParams(tenantId, locked));
  return new Map(rows.map((row) => [row.account_id, balanceOfRow(row).balanceMinor]));
}

export interface ProjectionAdvance {
  steps: number;
  deltasFolded: number;
}

/**
 * Moves delta rows into account_balance: each step deletes at most `batchDeltasMax` of them
 * (RETURNING their sums) and adds the sums in the same transaction. A delta row that is not
 * committed yet is invisible to the DELETE and stays for a later step; one that another projector
 * is folding is skipped (SKIP LOCKED). account_balance rows are updated in account order, so two
 * projectors never deadlock. Balances read the same before and after every step.
 */
const FOLD_STEP_SQL = `
  WITH picked AS (
    SELECT account_id, transfer_key FROM balance_delta WHERE tenant_id = $1
     LIMIT $2 FOR UPDATE SKIP LOCKED
  ), moved AS (
    DELETE FROM balance_delta d USING picked p
     WHERE d.tenant_id = $1 AND d.account_id = p.account_id AND d.transfer_key = p.transfer_key
    RETURNING d.account_id, d.debits_minor, d.credits_minor
  ), summed AS (
    SELECT account_id, sum(debits_minor) AS debits_minor, sum(credits_minor) AS credits_minor, count(*) AS deltas
      FROM moved GROUP BY account_id
  ), folded AS (
    INSERT INTO account_balance AS b (tenant_id, account_id, debits_minor, credits_minor)
    SELECT $1, account_id, debits_minor, credits_minor FROM summed ORDER BY account_id
    ON CONFLICT (tenant_id, account_id) DO UPDATE
      SET debits_minor = b.debits_minor + excluded.debits_minor,
          credits_minor = b.credits_minor + excluded.credits_minor
  )
  SELECT coalesce(sum(deltas), 0)::int AS deltas FROM summed`;

export async function advanceProjection(pool: Pool, tenantId: string, options: { stepsMax?: number; batchDeltasMax?: number } = {}): Promise<ProjectionAdvance> {
  const stepsMax = options.stepsMax ?? limits.ledger.projectionStepsMax;
  const batch = options.batchDeltasMax ?? limits.ledger.projectionBatchDeltasMax;
  const result: ProjectionAdvance = { steps: 0, deltasFolded: 0 };
  while (result.steps < stepsMax) {
    const folded = await withTransaction(pool, async (tx) => (await tx.query<{ deltas: number }>(FOLD_STEP_SQL, [tenantId, batch])).rows[0]?.deltas ?? 0);
    result.steps++;
    result.deltasFolded += folded;
    if (folded < batch) break;
  }
  projectionLagDeltas.set({ tenant: tenantId }, await projectionLag(pool, tenantId));
  return result;
}

/** Delta rows (one per account and transfer) committed but not yet folded. */
export async function projectionLag(db: Queryable, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ lag: number }>("SELECT count(*)::int AS lag FROM balance_delta WHERE tenant_id = $1", [tenantId]);
  return rows[0]?.lag ?? 0;
}

export async function tenantsWithAccounts(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ tenant_id: string }>("SELECT DISTINCT tenant_id FROM account ORDER BY tenant_id");
  return rows.map((r) => r.tenant_id);
}
