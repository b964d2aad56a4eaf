import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import type { Finding, Result } from "../../errors/finding.ts";
import type { PostOutcome } from "../../ledger/post-outcome.ts";
import { postTransfers } from "../../ledger/post-transfers.ts";
import type { Transfer } from "../../ledger/transfer.ts";
import { suspenseTransferFor, transferFor, type PartnerAccounts } from "../../normalize/posting-rules.ts";
import { decide, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";

/** New records of "post" and "record" rules: transfers built by their rules and posted as one batch. */
export async function postNewRecords(tx: Tx, context: RecordContext, decisions: readonly Decision[], fresh: Set<Candidate>): Promise<void> {
  const toPost: Candidate[] = [];
  for (const decision of undecided(decisions)) {
    if (!fresh.has(decision)) continue;
    if (decision.rule.action === "record" || (decision.rule.action === "post" && decision.record.amount === 0n)) {
      decision.outcome = "applied";
      continue;
    }
    if (decision.rule.action === "post") toPost.push(decision);
  }
  if (toPost.length === 0) return;
  for (const decision of toPost) {
    const alias = decision.rule.counterparty ? decision.record.attributes[decision.rule.counterparty] : undefined;
    if (decision.rule.counterparty && decision.counterparty === undefined) {
      decision.code = "INGEST_COUNTERPARTY_UNRESOLVED";
      decision.detail = alias === undefined ? "the record names no counterparty account" : `no account for ${alias}: posted to the partner's suspense account`;
    }
    decision.transfer = transferFor(decision.record, decision.rule, partnerAccountsOf(context, decision), decision.counterparty);
  }
  await postAndDecide(tx, toPost);
}

/** The partner's accounts in the record's currency, for rules that post to them; a request names its own accounts. */
function partnerAccountsOf(context: RecordContext, decision: Candidate): PartnerAccounts | undefined {
  if (context.arrival.kind !== "file") return undefined;
  const accounts = context.arrival.accounts.get(decision.record.currency);
  assert(accounts, `partner accounts in ${decision.record.currency} were opened before the chunk`);
  return accounts;
}

/**
 * Posts the decisions' transfers as one batch and turns each ledger outcome into the record's
 * outcome. A transfer the funds refuse whose rule says `"insufficientFunds": "suspense"` (an ISO
 * 8583 advice: the scheme decided in our stead) goes again in a second batch, its debit leg taken
 * from the suspense account the record names, under the same key.
 */
export async function postAndDecide(tx: Tx, decisions: readonly Decision[]): Promise<void> {
  const posted = await postTransfers(tx, decisions.map((d) => ({
    transfer: d.transfer as Transfer,
  })));
  const results = posted.map((p) => p.outcome);
  const toSuspense = decisions.flatMap((decision, index) => {
    const result = results[index] as Result<PostOutcome, Finding>;
    const short = !result.ok && result.error.code === "LEDGER_INSUFFICIENT_FUNDS";
    return short && decision.rule?.insufficientFunds === "suspense" && decision.record ? [index] : [];
  });
  if (toSuspense.length > 0) {
    const retried = toSuspense.map((index) => {
      const decision = decisions[index] as Candidate;
      decision.transfer = suspenseTransferFor(decision.record, decision.rule, decision.transfer as Transfer);
      return decision.transfer;
    });
    const second = (await postTransfers(tx, retried.map((transfer) => ({ transfer }))))
      .map((p) => p.outcome);
    toSuspense.forEach((index, i) => { results[index] = second[i] as Result<PostOutcome, Finding>; });
  }
  for (const [index, decision] of decisions.entries()) decideFromPosting(decision, results[index] as Result<PostOutcome, Finding>);
  for (const index of toSuspense) {
    const decision = decisions[index] as Candidate;
    if (decision.outcome !== "applied") continue;
    decide(decision, "applied", "RECORD_POSTED_FROM_SUSPENSE", `${decision.record.attributes[decision.rule.suspenseAttribute ?? ""] ?? "suspense"} took the debit the account could not cover: applied as advised`);
  }
}

export function decideFromPosting(decision: Decision, result: Result<PostOutcome, Finding>): void {
  const transfer = decision.transfer as Transfer;
  if (!result.ok) {
    // The only refusal input can cause here: accounts and currencies were checked upstream.
    assert(result.error.code === "LEDGER_INSUFFICIENT_FUNDS", `posting of ${transfer.transferKey} failed: ${result.error.code} ${result.error.message}`);
    decide(decision, "rejected", "INGEST_INSUFFICIENT_FUNDS", `${result.error.message}: nothing posted; return the entry (R01)`);
    delete decision.transfer;
    return;
  }
  decision.transferKey = transfer.transferKey;
  if (result.value === "applied") {
    decision.outcome = "applied";
  } else if (result.value === "exists") {
    decide(decision, "duplicate", "INGEST_RECORD_DUPLICATE");
    decision.originalRef = transfer.transferKey;
  } else {
    decide(decision, "conflict", "INGEST_RECORD_CONFLICT", `transfer ${transfer.transferKey} ${result.value.replaceAll("_", " ")}`);
    decision.originalRef = transfer.transferKey;
    decision.review = { reason: "conflict", matchedRef: transfer.transferKey };
    delete decision.transferKey;
  }
}
