import type { Queryable } from "../../db/pool.ts";
import { findAccounts } from "../../ledger/accounts.ts";
import { namedAccountsOf } from "../../normalize/posting-rules.ts";
import { decide, undecided, type Decision, type RecordContext } from "../decision.ts";

/**
 * Records whose rule posts to accounts they name themselves (an API payment's debtor and creditor)
 * are checked before any key is claimed: a record naming an unknown account, or one in another
 * currency, is invalid input, rejected like a malformed line, and leaves its key unclaimed.
 * Accounts are permanent (no delete, no change of currency: migration 0009), so the check holds.
 */
export async function checkNamedAccounts(tx: Queryable, context: RecordContext, decisions: readonly Decision[]): Promise<void> {
  const naming = undecided(decisions).filter((d) => d.rule.legs?.some((leg) => leg.account === "named"));
  if (naming.length === 0) return;
  const wanted = naming.flatMap((d) => namedAccountsOf(d.record, d.rule) ?? []);
  const accounts = await findAccounts(tx, context.tenantId, wanted);
  for (const decision of naming) {
    const named = namedAccountsOf(decision.record, decision.rule);
    const missing = named === undefined ? "(none)" : named.find((id) => !accounts.has(id));
    if (missing !== undefined) {
      decide(decision, "rejected", "RECORD_ACCOUNT_UNKNOWN", `no account ${missing}`);
      continue;
    }
    const other = (named ?? []).find((id) => accounts.get(id)?.currency !== decision.record.currency);
    if (other !== undefined) decide(decision, "rejected", "RECORD_ACCOUNT_CURRENCY_MISMATCH", `account ${other} is in ${accounts.get(other)?.currency ?? "?"}, the record in ${decision.record.currency}`);
  }
}
