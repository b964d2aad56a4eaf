import { assert } from "../../assert.ts";
import type { Tx } from "../../db/transaction.ts";
import { postTransfers, type PostResult, type Transfer } from "../../ledger/index.ts";
import { suspenseTransferFor, transferFor, type PartnerAccounts } from "../../normalize/posting-rules.ts";
import type {
  Applied, Candidate, Conflict, Decided, Duplicate, RecordContext, Rejected,
} from "../decision.ts";

/** A record's transfer, to post; `note`: what an applied outcome says of it (its counterparty). */
export interface Posting {
  readonly candidate: Candidate;
  readonly transfer: Transfer;
  readonly note?: { readonly code: "RECORD_COUNTERPARTY_UNRESOLVED"; readonly detail: string };
}

/** What a posting can come to. */
export type PostingOutcome = Applied | Duplicate | Conflict | Rejected;

/** A posted record: the transfer the ledger was given last (a suspense retry's), its outcome. */
export interface PostedRecord {
  readonly candidate: Candidate;
  readonly transfer: Transfer;
  readonly outcome: PostingOutcome;
}

/**
 * New records of "post" and "record" rules: transfers built by their rules and posted as one
 * batch. `fresh` are the new records still undecided, in the batch's order (the funds are held in
 * that order); `counterparties` the accounts their aliases resolved to (else: suspense).
 */
export async function postNewRecords(
  tx: Tx, context: RecordContext, fresh: readonly Candidate[],
  counterparties: ReadonlyMap<Candidate, string>,
): Promise<Decided> {
  const decided: Decided = new Map();
  const toPost: Posting[] = [];
  for (const candidate of fresh) {
    const { record, rule } = candidate;
    if (rule.action === "record" || (rule.action === "post" && record.amount === 0n)) {
      decided.set(candidate, { kind: "applied" });
      continue;
    }
    if (rule.action !== "post") continue;
    const counterparty = counterparties.get(candidate);
    const transfer = transferFor(record, rule, partnerAccountsOf(context, candidate), counterparty);
    if (!rule.counterparty || counterparty !== undefined) {
      toPost.push({ candidate, transfer });
      continue;
    }
    const alias = record.attributes[rule.counterparty];
    const detail = alias === undefined
      ? "the record names no counterparty account"
      : `no account for ${alias}: posted to the partner's suspense account`;
    toPost.push({ candidate, transfer, note: { code: "RECORD_COUNTERPARTY_UNRESOLVED", detail } });
  }
  for (const { candidate, outcome } of await postCandidates(tx, toPost)) {
    decided.set(candidate, outcome);
  }
  return decided;
}

/**
 * The partner's accounts in the record's currency, for rules that post to them; a request names
 * its own accounts.
 */
function partnerAccountsOf(
  context: RecordContext, candidate: Candidate,
): PartnerAccounts | undefined {
  if (context.arrival.kind !== "file") return undefined;
  const accounts = context.arrival.accounts.get(candidate.record.currency);
  assert(accounts, `partner accounts in ${candidate.record.currency} were opened before the chunk`);
  return accounts;
}

/**
 * Posts the records' transfers as one batch and turns each ledger outcome into the record's
 * outcome; each posting comes back with it (and the transfer the ledger was given last). A
 * transfer the funds refuse whose rule says `"insufficientFunds": "suspense"` (an ISO 8583 advice:
 * the scheme decided in our stead) goes again in a second batch, its debit leg taken from the
 * suspense account the record names, under the same key.
 */
export async function postCandidates<T extends Posting>(
  tx: Tx, postings: readonly T[],
): Promise<Array<T & PostedRecord>> {
  if (postings.length === 0) return [];
  const posted = await postTransfers(tx, postings.map((posting) => ({
    posting, transfer: posting.transfer,
  })));
  const toSuspense = posted.filter(({ posting, outcome }) => isShortOfFunds(outcome)
    && posting.candidate.rule.insufficientFunds === "suspense");
  const retried = await postTransfers(tx, toSuspense.map(({ posting, transfer }) => ({
    candidate: posting.candidate,
    transfer: suspenseTransferFor(posting.candidate.record, posting.candidate.rule, transfer),
  })));
  const retriedByCandidate = new Map(retried.map((p) => [p.candidate, p]));
  return posted.map(({ posting, transfer, outcome }) => {
    const again = retriedByCandidate.get(posting.candidate);
    if (again === undefined) {
      return { ...posting, transfer, outcome: outcomeOfPosting(transfer, outcome, posting.note) };
    }
    const suspense = outcomeOfPosting(again.transfer, again.outcome, posting.note);
    if (suspense.kind !== "applied") {
      return { ...posting, transfer: again.transfer, outcome: suspense };
    }
    const { record, rule } = posting.candidate;
    const account = record.attributes[rule.suspenseAttribute ?? ""] ?? "suspense";
    return { ...posting, transfer: again.transfer, outcome: {
      kind: "applied", transfer: again.transfer, code: "RECORD_POSTED_FROM_SUSPENSE",
      detail: `${account} took the debit the account could not cover: applied as advised`,
    } };
  });
}

function isShortOfFunds(result: PostResult): boolean {
  return !result.ok && result.error.code === "LEDGER_INSUFFICIENT_FUNDS";
}

/**
 * The record's outcome of its transfer's posting: applied (with what it says of its counterparty);
 * a duplicate when the ledger held its key with the same content (it keeps the counterparty's
 * detail: the ledger answered for the key alone); a conflict for a person when the ledger held it
 * with other content; rejected when the funds refused it.
 */
export function outcomeOfPosting(
  transfer: Transfer, result: PostResult, note?: Posting["note"],
): PostingOutcome {
  const transferKey = transfer.transferKey;
  if (!result.ok) {
    const { code, message } = result.error;
    // The only refusal input can cause here: accounts and currencies were checked upstream.
    const failed = `posting of ${transferKey} failed: ${code} ${message}`;
    assert(code === "LEDGER_INSUFFICIENT_FUNDS", failed);
    const detail = `${message}: nothing posted; return the entry (R01)`;
    return { kind: "rejected", code: "RECORD_INSUFFICIENT_FUNDS", detail };
  }
  if (result.value === "applied") return { kind: "applied", transfer, ...note };
  if (result.value === "exists") {
    const detail = note === undefined ? {} : { detail: note.detail };
    return {
      kind: "duplicate", code: "RECORD_DUPLICATE", originalRef: transferKey, ...detail,
    };
  }
  return {
    kind: "conflict", code: "RECORD_CONFLICT", originalRef: transferKey,
    detail: `transfer ${transferKey} ${result.value.replaceAll("_", " ")}`,
    review: { matchedRef: transferKey },
  };
}
