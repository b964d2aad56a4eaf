import { assert } from "../assert.ts";
import { gatewayAccounts, routeCard } from "../cards/cards.ts";
import type { Tx } from "../db/transaction.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { isSourcePaused } from "../incidents/source-pause.ts";
import { balanceOf } from "../ledger/balance.ts";
import {
  cardOriginalRecord, identityOf, naturalKeyOf, originalFingerprintOf, type CardOriginal, type MessageKind,
} from "../normalize/from-iso8583.ts";
import { currencyByCode, currencyByNumeric } from "../protocols/iso4217/currency.ts";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import type { Decision } from "../records/decision.ts";
import { decideRecords } from "../records/decide-records.ts";
import { selectKeys } from "../records/store/keys.ts";
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";
import { inTransaction, insertInbound, lockOriginal, positionOf, selectSeen, type InboundRow, type StoredResponse } from "./inbound-store.ts";
import { authorizationIdOf, buildResponse, isRepeatMti, panOf, replayedResponse, textField, type ResponseCodeName } from "./messages.ts";
import { availableBalanceAmount, processingRuleOf } from "./processing-codes.ts";

/**
 * Originals (0100/0101, 0120/0121, 0200/0201, 0220/0221): the adapter checks the format, routes
 * the card, turns the message into a canonical record (src/normalize/from-iso8583.ts) and lets the
 * record core decide it as a request of one (docs/decisions/0032): the core claims the key,
 * compares a repeat's fingerprint, posts under the processing code's rule and records every
 * repeat. What stays here is the channel's contract: the stored response a repeat is answered
 * with, the RRN as a second link, 94 for other content under a known key, 05 for an original
 * after its reversal, and the response codes.
 */

/** An original whose fields are well formed and whose card is routed, and the record the core is given. */
type Routed = { original: CardOriginal; item: IngestRecord; naturalKey: string; fingerprint: string };

const isAdvice = (kind: MessageKind) => kind === "authorizationAdvice" || kind === "financialAdvice";
const isHold = (kind: MessageKind) => kind === "authorization" || kind === "authorizationAdvice";

function amountOf(message: Message, absentIsZero: boolean): { amountMinor: bigint; currency: string } | undefined {
  const amount = textField(message, 4) ?? (absentIsZero ? "0" : undefined);
  const currency = currencyByNumeric(textField(message, 49) ?? "");
  if (amount === undefined || !/^\d{1,12}$/.test(amount) || currency === undefined) return undefined;
  return { amountMinor: BigInt(amount), currency: currency.code };
}

export async function handleOriginal(deps: InboundDependencies, message: Message, context: InboundContext, kind: MessageKind): Promise<InboundResult> {
  const identity = identityOf(message);
  const rule = processingRuleOf(message, kind);
  // A balance inquiry may leave field 4 out: it asks, it moves nothing.
  const amount = amountOf(message, rule?.action === "balance");
  const pan = panOf(message);
  if (identity === undefined || pan === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  if (amount === undefined) return { response: buildResponse(message, "invalidAmount"), decision: "amount_or_currency_invalid" };
  const route = await routeCard(deps.pool, deps.keys, pan);
  if (route.kind === "unknown_issuer") return { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" };
  // An operator stopped this tenant's card channel (incident): decide nothing, the scheme stands in.
  if (await isSourcePaused(deps.pool, route.tenantId, "iso8583")) return { response: buildResponse(message, "sourcePaused"), decision: "source_paused" };

  const { currency } = amount;
  const original: CardOriginal = {
    tenantId: route.tenantId, mti: message.mti, messageKind: kind, identity, retrievalReferenceNumber: textField(message, 37),
    cardHash: route.card.cardHash, amountMinor: amount.amountMinor, currency,
    // The transaction type is part of what a message says (a refund is not a purchase).
    transactionType: (textField(message, 3) ?? "00").slice(0, 2), rule,
    account: route.kind === "card" ? { accountId: route.accountId, currency: route.accountCurrency } : undefined,
    gatewayAccounts: { holds: gatewayAccounts.holds(currency), scheme: gatewayAccounts.scheme(currency), suspense: gatewayAccounts.suspense(currency) },
    position: positionOf(message), connection: context.connection, valueDate: new Date().toISOString().slice(0, 10),
  };
  const item = cardOriginalRecord(original);
  const fingerprint = item.record?.fingerprint ?? originalFingerprintOf({ ...original, mtiClass: identity.mtiClass });
  const routed: Routed = { original, item, naturalKey: naturalKeyOf(identity), fingerprint };
  return inTransaction(deps.pool, (tx) => decideOriginal(tx, message, routed));
}

async function decideOriginal(tx: Tx, message: Message, routed: Routed): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  await lockOriginal(tx, original.tenantId, naturalKey);
  const { stored, reversalKey } = await selectSeen(tx, original.tenantId, naturalKey, original.identity.mtiClass, original.retrievalReferenceNumber);
  // The RRN link, and a key the record core never held (an original refused after its reversal, or
  // answered before the core decided this channel): answered from the store.
  if (stored !== undefined && (stored.natural_key !== naturalKey || !(await selectKeys(tx, original.tenantId, [naturalKey])).has(naturalKey))) {
    return answerFromStore(tx, message, routed, stored);
  }
  if (stored === undefined && reversalKey !== undefined) return refuseAfterReversal(tx, message, routed, reversalKey);

  const [decision] = await decideRecords(tx, {
    tenantId: original.tenantId, arrival: { kind: "request", channel: "iso8583", scope: original.connection }, suspectWindowHours: 0,
  }, [routed.item]);
  assert(decision?.outcome !== undefined, `card original ${naturalKey} was decided`);
  const result = { tenantId: original.tenantId, naturalKey };
  switch (decision.outcome) {
    case "applied":
      assert(stored === undefined, `${naturalKey} was claimed by the core although its response was stored`);
      return answerApplied(tx, message, routed, decision);
    case "duplicate":
      // Every key the core holds for this channel has its stored response (written in the same transaction).
      assert(stored !== undefined, `${naturalKey} is a repeat with a stored response`);
      return { ...result, response: replayedResponse(stored.response_mti, stored.response_fields, message), decision: isRepeatMti(message.mti) ? "repeat" : "retransmission" };
    case "conflict":
      return { ...result, response: buildResponse(message, "duplicateTransmission"), decision: "duplicate_transmission" };
    case "rejected":
      return answerRejected(tx, message, routed, decision, stored);
    default:
      throw new Error(`card original ${naturalKey} decided ${decision.outcome} (${decision.code ?? ""}): the card channel holds nothing for review`);
  }
}

/** What a new original came to: approved or acknowledged (with 38 or 54 where due), stored with its effect. */
async function answerApplied(tx: Tx, message: Message, routed: Routed, decision: Decision): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  const rule = original.rule;
  const account = original.account;
  assert(rule !== undefined && account !== undefined, "an applied card original has its rule and account");
  const code: ResponseCodeName = isAdvice(original.messageKind) ? "acknowledged" : "approved";
  const extra: Record<number, FieldValue> = code === "approved" && original.messageKind === "authorization" ? { 38: authorizationIdOf(naturalKey) } : {};
  if (rule.action === "balance") extra[54] = await availableBalance(tx, message, original.tenantId, account.accountId, account.currency);
  const outcome: InboundRow["outcome"] = rule.action === "approve" ? "approved" : rule.action === "balance" ? "answered"
    : decision.code === "RECORD_POSTED_FROM_SUSPENSE" ? "posted_to_suspense" : isHold(original.messageKind) ? "held" : "posted";
  const response = buildResponse(message, code, extra);
  await insertInbound(tx, rowOf(routed, { outcome, response, effectKey: decision.transferKey ?? null, accountId: account.accountId }));
  return { response, decision: outcome, tenantId: original.tenantId, naturalKey };
}

async function availableBalance(tx: Tx, message: Message, tenantId: string, accountId: string, currency: string): Promise<string> {
  const found = await balanceOf(tx, tenantId, accountId);
  const numeric = currencyByCode(currency)?.numeric;
  if (found === undefined || numeric === undefined) throw new Error(`account ${accountId} has no balance or an unknown currency`);
  return availableBalanceAmount(message, numeric, found.balanceMinor);
}

/** Input problems the core rejects before the claim, and the code each is declined with. */
const inputDeclines: Readonly<Record<string, ResponseCodeName>> = {
  ISO8583_CARD_UNKNOWN: "unknownCard",
  ISO8583_CURRENCY_NOT_SERVED: "invalidTransaction",
  ISO8583_PROCESSING_CODE_UNSUPPORTED: "unsupportedProcessingCode",
  // The core's own check of the accounts a rule names: the gateway accounts of the card's currency are opened with the card.
  RECORD_ACCOUNT_UNKNOWN: "invalidTransaction",
  RECORD_ACCOUNT_CURRENCY_MISMATCH: "invalidTransaction",
};

/**
 * A decline: for funds (51) the key was claimed and the answer is stored, so a repeat gets it again.
 * An input problem (14, 12) claims no key in the core, but its answer is stored too, so a repeat or
 * retransmission is answered from the store like any other (decision 0039): the same answer even
 * after the card is registered, and a dedup record. If the key already holds another message, that
 * is what the message is compared with.
 */
async function answerRejected(tx: Tx, message: Message, routed: Routed, decision: Decision, stored: StoredResponse | undefined): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  if (decision.code === "INGEST_INSUFFICIENT_FUNDS") {
    const response = buildResponse(message, "insufficientFunds");
    await insertInbound(tx, rowOf(routed, { outcome: "declined", response, effectKey: null, accountId: original.account?.accountId ?? null }));
    return { response, decision: "declined", tenantId: original.tenantId, naturalKey };
  }
  const code = inputDeclines[decision.code ?? ""];
  if (code === undefined) throw new Error(`card original ${naturalKey} rejected for an unexpected reason: ${decision.code ?? ""} ${decision.detail ?? ""}`);
  if (stored !== undefined) return answerFromStore(tx, message, routed, stored);
  const response = buildResponse(message, code);
  await insertInbound(tx, rowOf(routed, { outcome: "declined", response, effectKey: null, accountId: original.account?.accountId ?? null }));
  return { response, decision: "declined", tenantId: original.tenantId, naturalKey };
}

/**
 * A message the record core did not decide, answered from the stored response: another key with
 * this RRN (the second link), a key the core never held (an original refused after its reversal,
 * or one answered before the core decided this channel), or a message the core rejected as input
 * under a key that holds another one. Same content: the stored answer; other content: 94. Either
 * way a dedup record.
 */
async function answerFromStore(tx: Tx, message: Message, routed: Routed, stored: StoredResponse): Promise<InboundResult> {
  const { original, naturalKey, fingerprint } = routed;
  const byRrn = stored.natural_key !== naturalKey ? "_by_rrn" : "";
  const same = stored.fingerprint === fingerprint;
  await recordDedupEvents(tx, [{
    tenantId: original.tenantId, channel: "iso8583", scope: original.connection, dedupKey: stored.natural_key,
    reason: `${same ? "duplicate" : "conflict"}${byRrn}`, originalRef: stored.effect_key ?? stored.natural_key, position: original.position,
  }]);
  if (!same) return { response: buildResponse(message, "duplicateTransmission"), decision: "duplicate_transmission", tenantId: original.tenantId, naturalKey };
  return {
    response: replayedResponse(stored.response_mti, stored.response_fields, message),
    decision: `${isRepeatMti(message.mti) ? "repeat" : "retransmission"}${byRrn}`, tenantId: original.tenantId, naturalKey,
  };
}

/** The original arrived after its reversal: refused (05), never held; stored so that its repeats get 05 again. */
async function refuseAfterReversal(tx: Tx, message: Message, routed: Routed, reversalKey: string): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  await recordDedupEvents(tx, [{
    tenantId: original.tenantId, channel: "iso8583", scope: original.connection, dedupKey: naturalKey, reason: "original_after_reversal", originalRef: reversalKey, position: original.position,
  }]);
  const response = buildResponse(message, "refusedAfterReversal");
  await insertInbound(tx, rowOf(routed, { outcome: "refused_after_reversal", response, effectKey: null, accountId: null }));
  return { response, decision: "refused_after_reversal", tenantId: original.tenantId, naturalKey };
}

function rowOf(routed: Routed, decided: Pick<InboundRow, "outcome" | "response" | "effectKey" | "accountId">): InboundRow {
  const { original } = routed;
  return {
    tenantId: original.tenantId, naturalKey: routed.naturalKey, mtiClass: original.identity.mtiClass, rrn: original.retrievalReferenceNumber,
    mti: original.mti, fingerprint: routed.fingerprint, cardHash: original.cardHash, amountMinor: original.amountMinor, currency: original.currency,
    connection: original.connection, ...decided,
  };
}
