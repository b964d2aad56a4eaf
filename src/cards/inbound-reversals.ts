import { assert } from "../assert.ts";
import type { Tx } from "../db/transaction.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { cardReversalRecord, gatewayAccounts, identityOf, naturalKeyOf, originalIdentityOf, reversalFingerprintOf, type CardReversal } from "../normalize/from-iso8583.ts";
import { de, isRepeatMti, replayedResponse, responseMtiOf, textField, type Message } from "../protocols/iso8583/index.ts";
import { decideRecords, originalRefOf, type Decision } from "../records/index.ts";
import { routeCard } from "./cards.ts";
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";
import {
  inTransaction, insertReversal, lockOriginal, messagePositionOf, selectReversalSeen,
  type ReversalRow, type StoredCardResponse,
} from "./inbound-store.ts";
import { buildResponse, panOf } from "./messages.ts";
import { replacementAmountOf } from "./replacement-amounts.ts";

/**
 * Reversals (0400/0401, 0420/0421): the issuer side checks the format, places the reversal with its
 * tenant, turns it into a canonical record (src/normalize/from-iso8583.ts) and lets the record
 * core decide it as a request of one (docs/decisions/0039): the core claims the reversal's key,
 * matches it with the original its field 90 names, reverses an original at most once and posts
 * the undo. What stays here is the channel's contract: the stored response (one per original,
 * iso8583_inbound_reversal) a repeat is answered with, 94 for a second, different reversal, the
 * dedup records in the channel's words (`reversal-of:<original key>`), and the response codes.
 */
type Placed = Omit<CardReversal, "original"> & { originalKey: string; naturalKey: string };

/** The reversal's tenant: by its card, or without a PAN by its original (an orphan without a PAN cannot be placed). */
async function placeReversal(deps: InboundDependencies, message: Message, originalKey: string): Promise<{ tenantId: string; cardHash: string } | { refused: InboundResult }> {
  const pan = panOf(message);
  if (pan !== undefined) {
    const route = await routeCard(deps.pool, deps.keys, pan);
    if (route.kind === "unknown_issuer") return { refused: { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" } };
    return { tenantId: route.tenantId, cardHash: route.card.cardHash };
  }
  const owner = await deps.pool.query<{ tenant_id: string }>("SELECT tenant_id FROM iso8583_inbound WHERE natural_key = $1 LIMIT 2", [originalKey]);
  if (owner.rows.length !== 1 || owner.rows[0] === undefined) return { refused: { response: buildResponse(message, "originalNotFound"), decision: "reversal_unroutable" } };
  return { tenantId: owner.rows[0].tenant_id, cardHash: "" };
}

export async function handleReversal(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  const identity = identityOf(message);
  const originalIdentity = originalIdentityOf(message);
  if (identity === undefined || originalIdentity === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  const originalKey = naturalKeyOf(originalIdentity);
  const placed = await placeReversal(deps, message, originalKey);
  if ("refused" in placed) return placed.refused;
  const amountText = textField(message, de.amountTransaction) ?? "";
  if (!/^\d{1,12}$/.test(amountText)) return { response: buildResponse(message, "invalidAmount"), decision: "amount_invalid" };
  const replacement = replacementAmountOf(message);
  if (replacement.kind === "malformed") return { response: buildResponse(message, "formatError"), decision: "replacement_amounts_malformed" };
  const reversal: Placed = {
    tenantId: placed.tenantId, mti: message.mti, identity, originalIdentity, retrievalReferenceNumber: textField(message, de.retrievalReferenceNumber), cardHash: placed.cardHash,
    amountMinor: BigInt(amountText), currencyField: textField(message, de.currencyCodeTransaction) ?? "",
    // A partial reversal's actual amount is part of what it says: another actual amount is another reversal.
    actualMinor: replacement.kind === "actual" ? replacement.actualMinor : undefined,
    suspenseAccount: gatewayAccounts.suspense, position: messagePositionOf(message),
    connection: context.connection, valueDate: new Date().toISOString().slice(0, 10),
    originalKey, naturalKey: naturalKeyOf(identity),
  };
  return inTransaction(deps.pool, (tx) => decideReversal(tx, message, reversal));
}

async function decideReversal(tx: Tx, message: Message, reversal: Placed): Promise<InboundResult> {
  const { tenantId, originalKey, naturalKey } = reversal;
  await lockOriginal(tx, tenantId, originalKey);
  const seen = await selectReversalSeen(tx, tenantId, originalKey);
  const item = cardReversalRecord({ ...reversal, original: seen.original });
  // Field 95 can only lower the transaction's amount: an actual amount above the original's is refused, recording nothing.
  if (item.record === undefined) return { response: buildResponse(message, "invalidAmount"), decision: "reversal_actual_above_original", tenantId, naturalKey };
  const [decision] = await decideRecords(tx, {
    tenantId, arrival: { kind: "request", channel: "iso8583", scope: reversal.connection, callerRecordsRepeats: true }, suspectWindowHours: 0,
  }, [item]);
  assert(decision?.outcome !== undefined, `card reversal ${naturalKey} was decided`);
  switch (decision.outcome.kind) {
    case "applied":
      return answerApplied(tx, message, reversal, decision);
    case "orphan":
      return answerOrphan(tx, message, reversal);
    case "duplicate":
    case "conflict":
      // A reversal key the core holds belongs to an original with a stored first reversal; the same key naming another original has none: 94.
      if (seen.stored === undefined) return answerOtherOriginal(tx, message, reversal, decision);
      return answerRepeat(tx, message, reversal, seen.stored,
        decision.outcome.kind === "duplicate");
    case "rejected":
      return { response: buildResponse(message, "invalidAmount"), decision: "reversal_refused", tenantId, naturalKey };
    default:
      throw new Error(`card reversal ${naturalKey} decided ${decision.outcome.kind} `
        + `(${decision.outcome.code}): the card channel holds nothing for review`);
  }
}

/** The first reversal of a known original: what it undid (or that there was nothing to undo), stored with its effect. */
async function answerApplied(tx: Tx, message: Message, reversal: Placed, decision: Decision): Promise<InboundResult> {
  const applied = decision.outcome.kind === "applied" ? decision.outcome : undefined;
  const transfer = applied?.code === "RECORD_NOTHING_TO_REVERSE" ? undefined : applied?.transfer;
  const outcome: ReversalRow["outcome"] = transfer === undefined ? "nothing_to_reverse"
    : decision.outcome.code === "RECORD_POSTED_FROM_SUSPENSE" ? "reversed_to_suspense"
    : transfer.kind === "card_hold_release" ? "released" : "reversed";
  const response = buildResponse(message, "acknowledged");
  await insertReversal(tx, rowOf(reversal, { outcome, response, effectKey: transfer?.transferKey ?? null, undoneMinor: transfer === undefined ? 0n : (decision.record?.amount ?? 0n) }));
  return { response, decision: `reversal_${outcome}`, tenantId: reversal.tenantId, naturalKey: reversal.naturalKey };
}

/** A reversal of an original never seen: acknowledged, recorded, nothing moved; the original is refused (05) if it comes later. */
async function answerOrphan(tx: Tx, message: Message, reversal: Placed): Promise<InboundResult> {
  await recordDedupEvents(tx, [{ tenantId: reversal.tenantId, channel: "iso8583", scope: reversal.connection, dedupKey: `reversal-of:${reversal.originalKey}`, reason: "orphan", position: reversal.position }]);
  const response = buildResponse(message, "acknowledged");
  await insertReversal(tx, rowOf(reversal, { outcome: "orphan", response, effectKey: null, undoneMinor: 0n }));
  return { response, decision: "reversal_orphan", tenantId: reversal.tenantId, naturalKey: reversal.naturalKey };
}

/** A repeat or retransmission of the original's reversal gets its stored answer; a different reversal gets 94. Either way a dedup record. */
async function answerRepeat(
  tx: Tx, message: Message, reversal: Placed, stored: StoredCardResponse, same: boolean,
): Promise<InboundResult> {
  const reason = !same ? "duplicate_transmission" : isRepeatMti(message.mti) ? "repeat" : "retransmission";
  await recordDedupEvents(tx, [{
    tenantId: reversal.tenantId, channel: "iso8583", scope: reversal.connection, dedupKey: `reversal-of:${reversal.originalKey}`, reason,
    originalRef: stored.effect_key ?? stored.natural_key, position: reversal.position,
  }]);
  // The stored answer in the MTI this request expects: a 0420 repeating a 0400 is answered 0430, not the stored 0410.
  const response = same ? replayedResponse(responseMtiOf(message.mti), stored.response_fields, message) : buildResponse(message, "duplicateTransmission");
  return { response, decision: `reversal_${reason}`, tenantId: reversal.tenantId, naturalKey: reversal.naturalKey };
}

/** The reversal's own key, already held by a reversal of ANOTHER original: not this message; 94, nothing moved. */
async function answerOtherOriginal(tx: Tx, message: Message, reversal: Placed, decision: Decision): Promise<InboundResult> {
  await recordDedupEvents(tx, [{
    tenantId: reversal.tenantId, channel: "iso8583", scope: reversal.connection, dedupKey: `reversal-of:${reversal.originalKey}`, reason: "duplicate_transmission",
    originalRef: originalRefOf(decision.outcome) ?? reversal.naturalKey,
    position: reversal.position,
  }]);
  return { response: buildResponse(message, "duplicateTransmission"), decision: "reversal_duplicate_transmission", tenantId: reversal.tenantId, naturalKey: reversal.naturalKey };
}

function rowOf(reversal: Placed, decided: Pick<ReversalRow, "outcome" | "response" | "effectKey" | "undoneMinor">): ReversalRow {
  return {
    tenantId: reversal.tenantId, originalKey: reversal.originalKey, naturalKey: reversal.naturalKey, mti: reversal.mti, fingerprint: reversalFingerprintOf(reversal),
    amountMinor: reversal.amountMinor, actualMinor: reversal.actualMinor, connection: reversal.connection, ...decided,
  };
}
