import type { Tx } from "../db/transaction.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import { identityKeyOf } from "../normalize/cross-channel-keys.ts";
import type { Candidate, Decision, RecordContext } from "./decision.ts";
import { updateKeyStates } from "./store/keys.ts";
import { writeArrivals } from "./stages/arrivals.ts";
import { claimKeys } from "./stages/claim-keys.ts";
import { resolveCounterparties } from "./stages/counterparties.ts";
import { relateIdentities } from "./stages/identities.ts";
import { keyStatesOf } from "./stages/key-states.ts";
import { relatePaymentLegs } from "./stages/payment-legs.ts";
import { postNewRecords } from "./stages/post-records.ts";
import { compareRepeats } from "./stages/repeats.ts";
import { ruleDecision } from "./stages/posting-rules.ts";
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
 * A file chunk is a batch; one HTTP payment is a batch of one. The dedup marks, the postings, the
 * outcomes, review items and dedup events commit together or not at all.
 */
export async function decideRecords(tx: Tx, context: RecordContext, items: readonly IngestRecord[]): Promise<Decision[]> {
  const faultPoint = context.faultPoint ?? (() => undefined);
  const { decisions, fresh } = await decideBeforePosting(tx, context, items);
  await postNewRecords(tx, context, decisions, fresh);
  await updateKeyStates(tx, context.tenantId, keyStatesOf(context, fresh));
  await updateKeyStates(tx, context.tenantId, await matchReturns(tx, context, decisions, fresh));
  await undoNamedOriginals(tx, context, fresh);
  faultPoint("after_posting");
  await writeArrivals(tx, context, decisions);
  faultPoint("after_outcomes");
  return decisions;
}

/**
 * What `decideRecords` would decide, up to the posting: the same stages from the posting rules to
 * the suspects, in the caller's transaction, which the caller ROLLS BACK (the claims are real
 * inserts, so later chunks of one preview see earlier ones). Records still undecided would be
 * posted or recorded. Nothing is posted, no arrival is written, no metric counts it.
 */
export async function previewRecords(tx: Tx, context: RecordContext, items: readonly IngestRecord[]): Promise<Decision[]> {
  return (await decideBeforePosting(tx, context, items)).decisions;
}

async function decideBeforePosting(tx: Tx, context: RecordContext, items: readonly IngestRecord[]): Promise<{ decisions: Decision[]; fresh: Set<Candidate> }> {
  const decisions = items.map(ruleDecision);
  for (const decision of decisions) {
    const identityKey = decision.record && decision.rule ? identityKeyOf(decision.record) : undefined;
    if (identityKey !== undefined) decision.identityKey = identityKey;
  }
  // The counterparties of records that carry a payment identity first: the identity is claimed
  // with its key and compares the creditor's account. The others' only once their key is known to
  // be new: a repeat is never posted, so a re-ingested chunk reads no alias.
  await resolveCounterparties(tx, context, decisions.filter((d) => d.identityKey !== undefined));
  const claimed = await claimKeys(tx, context, decisions);
  const fresh = claimed.fresh;
  await resolveCounterparties(tx, context, [...fresh].filter((d) => d.identityKey === undefined));
  context.faultPoint?.("after_keys");
  await compareRepeats(tx, context, decisions, claimed);
  await relatePaymentLegs(tx, context, decisions, fresh);
  await relateIdentities(tx, context, decisions, fresh);
  await holdSuspects(tx, context, fresh);
  return { decisions, fresh };
}
