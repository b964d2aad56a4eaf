import { assert } from "../assert.ts";
import type { Pool } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { recordDedupEvents, type DedupEvent } from "../dedup/dedup-event.ts";
import { balanceOf } from "../ledger/index.ts";
import { cardOriginalRecord, originalFingerprintOf, type CardOriginal, type MessageKind } from "../normalize/from-iso8583.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";
import { de, isRepeatMti, replayedResponse, type FieldValue, type Message } from "../protocols/iso8583/index.ts";
import {
  appliedTransferKeyOf, decideRecords, storedKeysOf, type Decision,
} from "../records/index.ts";
import { cardAccountsOf } from "./cards.ts";
import type { InboundResult, PendingOriginal } from "./inbound-types.ts";

export type { PendingOriginal } from "./inbound-types.ts";
import {
  inTransaction, insertInbounds, lockOriginals, selectSeenOriginals, type InboundRow,
  type StoredCardResponse,
} from "./inbound-store.ts";
import { approvalCodeOf, buildResponse, type ResponseCodeName } from "./messages.ts";
import { availableBalanceAmount } from "./processing-codes.ts";

/**
 * The decision of card originals in the caller's transaction (decisions 0037, 0045): a batch of
 * originals of one tenant, each key once, is decided as its members would be one after another in
 * batch order. One statement takes their locks, one reads what was answered under their keys (or
 * RRNs), ONE record-core call decides the new ones (the funds of each hold in batch order, under
 * the accounts' row locks), one statement stores every answer and one writes the channel's own
 * dedup records. A lone original is a batch of one, through the same code.
 */

/** An original whose fields are well formed and whose card is routed, and the record the core is given. */
export interface Routed {
  original: CardOriginal;
  item: ReceivedRecord;
  naturalKey: string;
  fingerprint: string;
}

/** The original with its card's account (undefined: the card is not registered) and the record the core is given. */
function routedOf(pending: PendingOriginal, account: CardOriginal["account"]): Routed {
  const original: CardOriginal = { ...pending.original, account };
  const item = cardOriginalRecord(original);
  const fingerprint = item.record?.fingerprint ?? originalFingerprintOf({ ...original, mtiClass: original.identity.mtiClass });
  return { original, item, naturalKey: pending.naturalKey, fingerprint };
}

interface RoutedOriginal {
  message: Message;
  routed: Routed;
}

const isAdvice = (kind: MessageKind) => kind === "authorizationAdvice" || kind === "financialAdvice";
const isHold = (kind: MessageKind) => kind === "authorization" || kind === "authorizationAdvice";

/** What the batch writes after the core decided: the stored answers and the channel's dedup records. */
interface Writes {
  rows: InboundRow[];
  events: DedupEvent[];
}

/** One original in its own transaction: a batch of one (run again once if it lost an RRN race). */
export async function decideAlone(pool: Pool, original: PendingOriginal): Promise<InboundResult> {
  const [result] = await inTransaction(pool, (tx) => decideOriginals(tx, [original]));
  assert(result !== undefined, "a batch of one has one answer");
  return result;
}

/** The accounts of a batch's cards (`cardAccountsOf`), read before its transaction or in it. */
export type CardAccounts = Map<string, { accountId: string; currency: string }>;

/** The distinct cards of a batch, for `cardAccountsOf`. */
export function cardHashesOf(pending: readonly PendingOriginal[]): string[] {
  return [...new Set(pending.map((p) => p.original.cardHash))];
}

/**
 * Decides a batch in the caller's transaction. `cardAccounts` may be read outside it (the writer
 * starts that read on another connection before BEGIN, so it is off the batch's chain of round
 * trips): a card's account is written once and never changes, as when the route was read before
 * the transaction of a lone message.
 */
export async function decideOriginals(tx: Tx, pending: readonly PendingOriginal[], cardAccounts?: Promise<CardAccounts>): Promise<InboundResult[]> {
  const { tenantId, connection } = (pending[0] as PendingOriginal).original;
  // The core writes its dedup records under the arrival's scope: the connection the messages came on.
  assert(pending.every((p) => p.original.tenantId === tenantId && p.original.connection === connection), "a batch of originals is one tenant's, from one connection");
  assert(new Set(pending.map((p) => p.naturalKey)).size === pending.length, "a batch of originals holds each key once");
  const accounts = cardAccounts ?? cardAccountsOf(tx, tenantId, cardHashesOf(pending));
  if (cardAccounts === undefined) await accounts;   // one statement at a time on a transaction's connection
  await lockOriginals(tx, tenantId, pending.map((p) => p.naturalKey));
  const seen = await selectSeenOriginals(tx, tenantId, pending.map((p) => ({
    naturalKey: p.naturalKey, mtiClass: p.original.identity.mtiClass, rrn: p.original.retrievalReferenceNumber,
  })));
  const accountOf = await accounts;
  const batch: RoutedOriginal[] = pending.map((p) => ({ message: p.message, routed: routedOf(p, accountOf.get(p.original.cardHash)) }));
  // Keys whose answer is stored under the key itself: does the record core hold them? (Old rows, and 05s, it does not.)
  const storedOwnKeys = batch.filter((b, i) => seen[i]?.stored?.natural_key === b.routed.naturalKey).map((b) => b.routed.naturalKey);
  const coreKeys = storedOwnKeys.length === 0
    ? new Map()
    : await storedKeysOf(tx, tenantId, storedOwnKeys);

  const writes: Writes = { rows: [], events: [] };
  const results: Array<InboundResult | undefined> = batch.map(() => undefined);
  const toCore: number[] = [];
  batch.forEach(({ message, routed }, i) => {
    const { stored, reversalKey } = seen[i] ?? {};
    // The RRN link, and a key the record core never held (an original refused after its reversal, or
    // answered before the core decided this channel): answered from the store.
    if (stored !== undefined && (stored.natural_key !== routed.naturalKey || !coreKeys.has(routed.naturalKey))) results[i] = answerFromStore(writes, message, routed, stored);
    else if (stored === undefined && reversalKey !== undefined) results[i] = refuseAfterReversal(writes, message, routed, reversalKey);
    else toCore.push(i);
  });

  if (toCore.length > 0) {
    const decisions = await decideRecords(tx, {
      tenantId, arrival: { kind: "request", channel: "iso8583", scope: connection }, suspectWindowHours: 0,
    }, toCore.map((i) => (batch[i] as RoutedOriginal).routed.item));
    assert(decisions.length === toCore.length, "the core decides every original of the batch");
    for (const [n, i] of toCore.entries()) {
      const { message, routed } = batch[i] as RoutedOriginal;
      results[i] = await answerDecided(tx, writes, message, routed, decisions[n] as Decision, seen[i]?.stored);
    }
  }
  await insertInbounds(tx, writes.rows);
  if (writes.events.length > 0) await recordDedupEvents(tx, writes.events);
  return results.map((result, i) => {
    assert(result !== undefined, `original ${(batch[i] as RoutedOriginal).routed.naturalKey} was answered`);
    return result;
  });
}

/** The answer to an original the core decided, by its decision. */
async function answerDecided(
  tx: Tx, writes: Writes, message: Message, routed: Routed, decision: Decision,
  stored: StoredCardResponse | undefined,
): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  assert(decision.outcome !== undefined, `card original ${naturalKey} was decided`);
  const result = { tenantId: original.tenantId, naturalKey };
  switch (decision.outcome.kind) {
    case "applied":
      assert(stored === undefined, `${naturalKey} was claimed by the core although its response was stored`);
      return answerApplied(tx, writes, message, routed, decision);
    case "duplicate":
      // Every key the core holds for this channel has its stored response (written in the same transaction).
      assert(stored !== undefined, `${naturalKey} is a repeat with a stored response`);
      return { ...result, response: replayedResponse(stored.response_mti, stored.response_fields, message), decision: isRepeatMti(message.mti) ? "repeat" : "retransmission" };
    case "conflict":
      return { ...result, response: buildResponse(message, "duplicateTransmission"), decision: "duplicate_transmission" };
    case "rejected":
      return answerRejected(writes, message, routed, decision, stored);
    default:
      throw new Error(`card original ${naturalKey} decided ${decision.outcome.kind} `
        + `(${decision.outcome.code}): the card channel holds nothing for review`);
  }
}

/** What a new original came to: approved or acknowledged (with 38 or 54 where due), stored with its effect. */
async function answerApplied(tx: Tx, writes: Writes, message: Message, routed: Routed, decision: Decision): Promise<InboundResult> {
  const { original, naturalKey } = routed;
  const rule = original.rule;
  const account = original.account;
  assert(rule !== undefined && account !== undefined, "an applied card original has its rule and account");
  const code: ResponseCodeName = isAdvice(original.messageKind) ? "acknowledged" : "approved";
  const extra: Record<number, FieldValue> = {};
  if (code === "approved" && original.messageKind === "authorization") {
    extra[de.authorizationIdentificationResponse] = approvalCodeOf(naturalKey);
  }
  if (rule.action === "balance") extra[de.additionalAmounts] = await availableBalance(tx, message, original.tenantId, account.accountId, account.currency);
  const outcome: InboundRow["outcome"] = rule.action === "approve" ? "approved" : rule.action === "balance" ? "answered"
    : decision.outcome.code === "RECORD_POSTED_FROM_SUSPENSE" ? "posted_to_suspense"
    : isHold(original.messageKind) ? "held" : "posted";
  const response = buildResponse(message, code, extra);
  const effectKey = appliedTransferKeyOf(decision.outcome);
  writes.rows.push(rowOf(routed, { outcome, response, effectKey, accountId: account.accountId }));
  return { response, decision: outcome, tenantId: original.tenantId, naturalKey };
}

/** Read after the core decided: batches never hold a balance inquiry (decision 0045), so it sees exactly what it would alone. */
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
function answerRejected(
  writes: Writes, message: Message, routed: Routed, decision: Decision,
  stored: StoredCardResponse | undefined,
): InboundResult {
  const { original, naturalKey } = routed;
  if (decision.outcome.code === "RECORD_INSUFFICIENT_FUNDS") {
    const response = buildResponse(message, "insufficientFunds");
    writes.rows.push(rowOf(routed, { outcome: "declined", response, effectKey: null, accountId: original.account?.accountId ?? null }));
    return { response, decision: "declined", tenantId: original.tenantId, naturalKey };
  }
  const code = inputDeclines[decision.outcome.code ?? ""];
  const reason = `${decision.outcome.code ?? ""} ${decision.outcome.detail ?? ""}`;
  if (code === undefined) {
    throw new Error(`card original ${naturalKey} rejected for an unexpected reason: ${reason}`);
  }
  if (stored !== undefined) return answerFromStore(writes, message, routed, stored);
  const response = buildResponse(message, code);
  writes.rows.push(rowOf(routed, { outcome: "declined", response, effectKey: null, accountId: original.account?.accountId ?? null }));
  return { response, decision: "declined", tenantId: original.tenantId, naturalKey };
}

/**
 * A message the record core did not decide, answered from the stored response: another key with
 * this RRN (the second link), a key the core never held (an original refused after its reversal,
 * or one answered before the core decided this channel), or a message the core rejected as input
 * under a key that holds another one. Same content: the stored answer; other content: 94. Either
 * way a dedup record.
 */
function answerFromStore(
  writes: Writes, message: Message, routed: Routed, stored: StoredCardResponse,
): InboundResult {
  const { original, naturalKey, fingerprint } = routed;
  const byRrn = stored.natural_key !== naturalKey ? "_by_rrn" : "";
  const same = stored.fingerprint === fingerprint;
  writes.events.push({
    tenantId: original.tenantId, channel: "iso8583", scope: original.connection, dedupKey: stored.natural_key,
    reason: `${same ? "duplicate" : "conflict"}${byRrn}`, originalRef: stored.effect_key ?? stored.natural_key, position: original.position,
  });
  if (!same) return { response: buildResponse(message, "duplicateTransmission"), decision: "duplicate_transmission", tenantId: original.tenantId, naturalKey };
  return {
    response: replayedResponse(stored.response_mti, stored.response_fields, message),
    decision: `${isRepeatMti(message.mti) ? "repeat" : "retransmission"}${byRrn}`, tenantId: original.tenantId, naturalKey,
  };
}

/** The original arrived after its reversal: refused (05), never held; stored so that its repeats get 05 again. */
function refuseAfterReversal(writes: Writes, message: Message, routed: Routed, reversalKey: string): InboundResult {
  const { original, naturalKey } = routed;
  writes.events.push({
    tenantId: original.tenantId, channel: "iso8583", scope: original.connection, dedupKey: naturalKey, reason: "original_after_reversal", originalRef: reversalKey, position: original.position,
  });
  const response = buildResponse(message, "refusedAfterReversal");
  writes.rows.push(rowOf(routed, { outcome: "refused_after_reversal", response, effectKey: null, accountId: null }));
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
