import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";
import type { Queryable } from "../db/pool.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { isAccountKind, type AccountKind } from "./account-kinds.ts";

export interface Account {
  tenantId: string;
  accountId: string;
  kind: AccountKind;
  currency: string;
}

/**
 * Creates an account, idempotent on its id: the same id with the same kind and currency is
 * `exists`; with another kind or currency it is refused, never silently changed.
 */
export async function openAccount(tx: Queryable, account: Account): Promise<Result<"created" | "exists", Finding>> {
  if (!isAccountKind(account.kind)) return fail(finding("CONFIG_INVALID", `unknown account kind ${account.kind}`, { field: "kind" }));
  if (!currencyByCode(account.currency)) return fail(finding("CURRENCY_UNKNOWN", `unknown currency ${account.currency}`, { field: "currency" }));
  const inserted = await tx.query(
    `INSERT INTO account (tenant_id, account_id, kind, currency) VALUES ($1, $2, $3, $4)
     ON CONFLICT (tenant_id, account_id) DO NOTHING RETURNING account_id`,
    [account.tenantId, account.accountId, account.kind, account.currency],
  );
  if (inserted.rowCount === 1) return ok("created");
  const existing = await findAccount(tx, account.tenantId, account.accountId);
  if (existing && existing.kind === account.kind && existing.currency === account.currency) return ok("exists");
  return fail(finding("LEDGER_ACCOUNT_EXISTS_DIFFERENT", `account ${account.accountId} exists as ${existing?.kind} ${existing?.currency}`, { field: "id" }));
}

export async function findAccount(tx: Queryable, tenantId: string, accountId: string): Promise<Account | undefined> {
  const { rows } = await tx.query<{ kind: AccountKind; currency: string }>(
    "SELECT kind, currency FROM account WHERE tenant_id = $1 AND account_id = $2",
    [tenantId, accountId],
  );
  const row = rows[0];
  return row ? { tenantId, accountId, kind: row.kind, currency: row.currency } : undefined;
}

/** Several accounts in one read, by id; absent ids are absent from the map. */
export async function findAccounts(tx: Queryable, tenantId: string, accountIds: readonly string[]): Promise<Map<string, Account>> {
  if (accountIds.length === 0) return new Map();
  const { rows } = await tx.query<{ account_id: string; kind: AccountKind; currency: string }>(
    // One probe per id (docs/decisions/0052).
    `SELECT a.account_id, a.kind, a.currency FROM unnest($2::text[]) AS w(account_id)
      CROSS JOIN LATERAL (SELECT account_id, kind, currency FROM account WHERE tenant_id = $1 AND account_id = w.account_id OFFSET 0) a`,
    [tenantId, [...new Set(accountIds)]],
  );
  return new Map(rows.map((r) => [r.account_id, { tenantId, accountId: r.account_id, kind: r.kind, currency: r.currency }]));
}

/** The tenant's accounts, first by id, at most limits.ledger.accountsListedMax of them. */
export async function listAccounts(db: Queryable, tenantId: string): Promise<Account[]> {
  return (await accountsPage(db, tenantId, { limit: limits.ledger.accountsListedMax })).accounts;
}

/**
 * One page of the tenant's accounts, by id after `afterAccountId` (keyset: an account's id never
 * changes), optionally of one kind; `hasMore` when another page follows.
 */
export async function accountsPage(
  db: Queryable, tenantId: string,
  page: { afterAccountId?: string; kind?: AccountKind; limit: number },
): Promise<{ accounts: Account[]; hasMore: boolean }> {
  assert(page.limit >= 1 && page.limit <= Math.max(limits.ledger.accountsPageMax,
    limits.ledger.accountsListedMax), "a page is bounded");
  const { rows } = await db.query<{ account_id: string; kind: AccountKind; currency: string }>(
    `SELECT account_id, kind, currency
       FROM account
      WHERE tenant_id = $1 AND ($2::text IS NULL OR account_id > $2)
        AND ($3::text IS NULL OR kind = $3)
      ORDER BY account_id
      LIMIT $4`,
    [tenantId, page.afterAccountId ?? null, page.kind ?? null, page.limit + 1],
  );
  const accounts = rows.slice(0, page.limit).map((r) => ({
    tenantId, accountId: r.account_id, kind: r.kind, currency: r.currency,
  }));
  return { accounts, hasMore: rows.length > page.limit };
}
