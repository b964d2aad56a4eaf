import type { Queryable } from "../../db/pool.ts";
import { resolveAliases } from "../../partners/partners.ts";
import { undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";

function aliasOf(decision: Candidate): string | undefined {
  return decision.rule.counterparty ? decision.record.attributes[decision.rule.counterparty] : undefined;
}

/**
 * The ledger account behind each new record's counterparty alias (one read for the chunk), in the
 * record's currency; unresolved stays undefined and the posting goes to the partner's suspense.
 * Called twice by the core: before the claim for the records that carry a payment identity (it is
 * claimed with its key, and two channels' arrivals of one payment are compared by the creditor's
 * account), after it for the other new records (a repeat is never posted: its alias is not read).
 */
export async function resolveCounterparties(tx: Queryable, context: RecordContext, decisions: readonly Decision[]): Promise<void> {
  const withAlias = undecided(decisions).filter((d) => d.rule.action === "post" && aliasOf(d) !== undefined);
  if (withAlias.length === 0) return;
  const resolved = await resolveAliases(tx, context.tenantId, withAlias.map((d) => aliasOf(d) as string));
  for (const decision of withAlias) {
    const account = resolved.get(aliasOf(decision) as string);
    if (account && account.currency === decision.record.currency) decision.counterparty = account.accountId;
  }
}
