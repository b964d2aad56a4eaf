import type { Queryable } from "../../db/pool.ts";
import { resolveAliases } from "../../partners/partners.ts";
import type { Candidate, RecordContext } from "../decision.ts";

function aliasOf(candidate: Candidate): string | undefined {
  const attribute = candidate.rule.counterparty;
  return attribute ? candidate.record.attributes[attribute] : undefined;
}

/**
 * The ledger account behind each new record's counterparty alias (one read for the chunk), in the
 * record's currency; an unresolved one is left out and the posting goes to the partner's suspense.
 * Called twice by the core: before the claim for the records that carry a payment identity (it is
 * claimed with its key, and two channels' arrivals of one payment are compared by the creditor's
 * account), after it for the other new records (a repeat is never posted: its alias is not read).
 */
export async function resolveCounterparties(
  tx: Queryable, context: RecordContext, candidates: readonly Candidate[],
): Promise<Map<Candidate, string>> {
  const withAlias = candidates.flatMap((candidate) => {
    const alias = aliasOf(candidate);
    return candidate.rule.action === "post" && alias !== undefined ? [{ candidate, alias }] : [];
  });
  const counterparties = new Map<Candidate, string>();
  if (withAlias.length === 0) return counterparties;
  const resolved = await resolveAliases(tx, context.tenantId, withAlias.map((w) => w.alias));
  for (const { candidate, alias } of withAlias) {
    const account = resolved.get(alias);
    const inCurrency = account?.currency === candidate.record.currency;
    if (account && inCurrency) counterparties.set(candidate, account.accountId);
  }
  return counterparties;
}
