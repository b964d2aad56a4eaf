import type { Pool, Queryable } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import type { Finding, Result } from "../../src/errors/finding.ts";
import { postTransfer, type PostOutcome } from "../../src/ledger/post-transfers.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import type { AccountKind } from "../../src/ledger/account-kinds.ts";
import type { Transfer } from "../../src/ledger/transfer.ts";

export async function givenAccounts(db: Queryable, tenantId: string, accounts: Array<[id: string, kind: AccountKind, currency?: string]>): Promise<void> {
  for (const [accountId, kind, currency] of accounts) {
    const result = await openAccount(db, { tenantId, accountId, kind, currency: currency ?? "USD" });
    if (!result.ok) throw new Error(result.error.message);
  }
}

/** A two-leg transfer: debit `from`, credit `to`. */
export function transferOf(tenantId: string, transferKey: string, from: string, to: string, amountMinor: bigint, extra: Partial<Transfer> = {}): Transfer {
  return {
    tenantId,
    transferKey,
    kind: "payment",
    valueDate: "2026-12-02",
    legs: [
      { accountId: from, direction: "D", amountMinor, currency: "USD" },
      { accountId: to, direction: "C", amountMinor, currency: "USD" },
    ],
    ...extra,
  };
}

/** postTransfer in a transaction of its own. */
export function post(pool: Pool, transfer: Transfer): Promise<Result<PostOutcome, Finding>> {
  return withTransaction(pool, (tx) => postTransfer(tx, transfer));
}
