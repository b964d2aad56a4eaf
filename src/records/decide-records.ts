import { assert } from "../assert.ts";
import type { Tx } from "../db/transaction.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import {
  Outcomes, type Candidate, type Decision, type Outcome, type RecordContext,
} from "./decision.ts";
import { updateKeyStates } from "./store/keys.ts";
import { writeArrivals } from "./stages/arrivals.ts";
import { claimKeys } from "./stages/claim-keys.ts";
import { resolveCounterparties } from "./stages/counterparties.ts";
import { relateIdentities } from "./stages/identities.ts";
import { keyStatesOf } from "./stages/key-states.ts";
import { relatePaymentLegs } from "./stages/payment-legs.ts";
import { postNewRecords } from "./stages/post-records.ts";
import { compareRepeats } from "./stages/repeats.ts";
import { candidateOf, isCandidate } from "./stages/posting-rules.ts";
import { holdSuspects } from "./stages/suspects.ts";
import { matchReturns } from "./stages/returns.ts";
import { undoNamedOriginals } from "./stages/undo-originals.ts";

/**
 * THE record core (docs/decisions/0032-record-core.md): canonical records, whatever channel they
 * came through, are decided here in the caller's transaction, stage by stage:
 *   rules -> counterparties (of records with a payment identity) -> claim keys (and named accounts,
 *   and payment identities) -> counterparties (of the other new records) -> repeats ->
 *   payment legs (UETR) -> identities (cross-channel) -> suspects -> post -> key states -> returns ->
 *   undos of named originals (partial, cumulative up to the original's amount) -> arrivals.
 * Each stage is given the records still undecided (read-only candidates) and returns the outcomes
 * it decided, written once per record (docs/decisions/0058).
 * A file chunk is a batch; one HTTP payment is a batch of one. The dedup marks, the postings, the
 * outcomes, review items and dedup events commit together or not at all.
 */
export async function decideRecords(
  tx: Tx, context: RecordContext, items: readonly ReceivedRecord[],
): Promise<Decision[]> {
  const faultPoint = context.faultPoint ?? (() => undefined);
  const batch = await decideBeforePosting(tx, context, items);
  const { outcomes, fresh } = batch;
  outcomes.write(await postNewRecords(tx, context, undecidedFresh(batch), batch.counterparties));
  await updateKeyStates(tx, context.tenantId, keyStatesOf(context, fresh, outcomes));
  const returns = await matchReturns(tx, context, items, fresh, outcomes);
  outcomes.write(returns.decided);
  await updateKeyStates(tx, context.tenantId, returns.states);
  outcomes.write(await undoNamedOriginals(tx, context, outcomes.undecided(fresh)));
  faultPoint("after_posting");
  const decisions = decisionsOf(batch);
  await writeArrivals(tx, context, decisions);
  faultPoint("after_outcomes");
  return decisions;
}

/** A record as the preview leaves it: no outcome yet means it would be posted or recorded. */
export interface Preview {
  readonly item: ReceivedRecord;
  readonly record?: CanonicalRecord;
  readonly outcome: Outcome | undefined;
}

/**
 * What `decideRecords` would decide, up to the posting: the same stages from the posting rules to
 * the suspects, in the caller's transaction, which the caller ROLLS BACK (the claims are real
 * inserts, so later chunks of one preview see earlier ones). Records still undecided would be
 * posted or recorded. Nothing is posted, no arrival is written, no metric counts it.
 */
export async function previewRecords(
  tx: Tx, context: RecordContext, items: readonly ReceivedRecord[],
): Promise<Preview[]> {
  const { entries, outcomes } = await decideBeforePosting(tx, context, items);
  return entries.map((entry) => (isCandidate(entry)
    ? { item: entry.item, record: entry.record, outcome: outcomes.of(entry) }
    : entry));
}

/** A batch on its way through the stages. */
interface Batch {
  /** Per record, in order: its candidate, or its decision when the first stage rejected it. */
  entries: ReadonlyArray<Candidate | Decision>;
  candidates: readonly Candidate[];
  outcomes: Outcomes;
  /** The records whose keys this batch claimed, in the keys' sorted order. */
  fresh: ReadonlySet<Candidate>;
  /** The ledger accounts the counterparty aliases of new records resolved to. */
  counterparties: ReadonlyMap<Candidate, string>;
}

async function decideBeforePosting(
  tx: Tx, context: RecordContext, items: readonly ReceivedRecord[],
): Promise<Batch> {
  const entries = items.map(candidateOf);
  const candidates = entries.filter(isCandidate);
  const outcomes = new Outcomes();
  // The counterparties of records that carry a payment identity first: the identity is claimed
  // with its key and compares the creditor's account. The others' only once their key is known to
  // be new: a repeat is never posted, so a re-ingested chunk reads no alias.
  const withIdentity = candidates.filter((c) => c.identityKey !== undefined);
  const counterparties = await resolveCounterparties(tx, context, withIdentity);
  const claimed = await claimKeys(tx, context, candidates, counterparties);
  outcomes.write(claimed.rejected);
  const batch: Batch = { entries, candidates, outcomes, fresh: claimed.fresh, counterparties };
  const others = outcomes.undecided(batch.fresh).filter((c) => c.identityKey === undefined);
  for (const [candidate, account] of await resolveCounterparties(tx, context, others)) {
    counterparties.set(candidate, account);
  }
  context.faultPoint?.("after_keys");
  const repeats = outcomes.undecided(candidates).filter((c) => !batch.fresh.has(c));
  outcomes.write(await compareRepeats(tx, context, repeats, claimed));
  outcomes.write(await relatePaymentLegs(tx, context, undecidedFresh(batch), batch.fresh));
  const { identitiesClaimed } = claimed;
  outcomes.write(await relateIdentities(
    tx, context, undecidedFresh(batch), identitiesClaimed, counterparties));
  outcomes.write(await holdSuspects(tx, context, outcomes.undecided(batch.fresh)));
  return batch;
}

/** The new records still undecided, in the batch's order (a posting batch holds funds in it). */
function undecidedFresh(batch: Batch): Candidate[] {
  return batch.outcomes.undecided(batch.candidates).filter((c) => batch.fresh.has(c));
}

/** Each record with its outcome, in the batch's order: every record is decided by now. */
function decisionsOf(batch: Batch): Decision[] {
  return batch.entries.map((entry) => {
    if (!isCandidate(entry)) return entry;
    const outcome = batch.outcomes.of(entry);
    assert(outcome !== undefined, `record ${entry.item.index} was decided`);
    return { item: entry.item, record: entry.record, outcome };
  });
}
