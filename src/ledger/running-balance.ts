import type { Pool } from "../db/pool.ts";
import { withTransaction } from "../db/transaction.ts";
import { signedBalance } from "./account-kinds.ts";
import { balanceOf, type Balance } from "./balance.ts";
import { accountStatement, type Statement } from "./statement.ts";

/**
 * An account's last entries with the balance after each (issue 33): the balance and the entries
 * are read in one repeatable-read snapshot, and the running balance is counted back from the
 * balance, so the last line's equals it exactly even when older entries are not shown.
 */
export interface StatementWithBalances {
  balance: Balance;
  statement: Statement;
  balanceAfterMinor: bigint[];   // one per statement line, signed by the account's normal side
}

export async function statementWithRunningBalance(
  pool: Pool, tenantId: string, accountId: string, entriesMax: number,
): Promise<StatementWithBalances | undefined> {
  return withTransaction(pool, async (tx) => {
    const balance = await balanceOf(tx, tenantId, accountId);
    if (!balance) return undefined;
    const statement = await accountStatement(tx, tenantId, accountId, entriesMax);
    return { balance, statement, balanceAfterMinor: runningBalances(balance, statement) };
  }, { isolation: "repeatable read" });
}

/** The balance after each line, newest counted back from the balance (a pure function). */
export function runningBalances(balance: Balance, statement: Statement): bigint[] {
  const after: bigint[] = new Array<bigint>(statement.lines.length);
  let running = balance.balanceMinor;
  for (let index = statement.lines.length - 1; index >= 0; index -= 1) {
    const line = statement.lines[index];
    if (!line) continue;
    after[index] = running;
    const debit = line.direction === "D" ? line.amountMinor : 0n;
    const credit = line.direction === "C" ? line.amountMinor : 0n;
    running -= signedBalance(balance.kind, debit, credit);
  }
  return after;
}
