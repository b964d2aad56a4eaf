import { gatewayAccounts, type CardRoute } from "../cards/cards.ts";
import type { Tx } from "../db/transaction.ts";
import { findAccount } from "../ledger/accounts.ts";
import { balanceOf } from "../ledger/balance.ts";
import { postTransfer } from "../ledger/post-transfers.ts";
import { storedTransfers } from "../ledger/stored-transfers.ts";
import type { Leg } from "../ledger/transfer.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import type { ResponseCodeName } from "./messages.ts";
import { availableBalanceAmount, processingRuleOf, type MessageKind, type RuleAccount } from "./processing-codes.ts";

/**
 * The ledger side of the issuer's decisions: what an original posts under its processing code's
 * rule (protocols/iso8583/processing-codes.json), and what a reversal, full or partial (field 95),
 * undoes. Every transfer's key derives from the original's natural key, so none posts twice.
 */
export type OriginalOutcome = "held" | "posted" | "posted_to_suspense" | "declined" | "approved" | "answered";
export interface OriginalDecision {
  outcome: OriginalOutcome;
  code: ResponseCodeName;
  effectKey: string | null;
  accountId: string | null;
  extra?: Record<number, FieldValue>;      // response fields the decision adds (54 for a balance inquiry)
}

export interface Amount {
  amountMinor: bigint;
  currency: string;
}

const declined = (code: ResponseCodeName, accountId: string | null = null): OriginalDecision => ({ outcome: "declined", code, effectKey: null, accountId });
const isHoldKind = (kind: MessageKind) => kind === "authorization" || kind === "authorizationAdvice";
const isAdviceKind = (kind: MessageKind) => kind === "authorizationAdvice" || kind === "financialAdvice";

export async function decideOriginal(tx: Tx, kind: MessageKind, tenantId: string, naturalKey: string, route: CardRoute, amount: Amount, message: Message): Promise<OriginalDecision> {
  if (route.kind !== "card") return declined("unknownCard");
  const account = await findAccount(tx, tenantId, route.accountId);
  if (account === undefined || account.currency !== amount.currency) return declined("invalidTransaction", route.accountId);
  const rule = processingRuleOf(message, kind);
  if (rule === undefined) return declined("unsupportedProcessingCode", route.accountId);
  const approvedCode: ResponseCodeName = isAdviceKind(kind) ? "acknowledged" : "approved";
  if (rule.action === "approve") return { outcome: "approved", code: approvedCode, effectKey: null, accountId: route.accountId };
  if (rule.action === "balance") {
    const found = await balanceOf(tx, tenantId, route.accountId);
    const numeric = currencyByCode(account.currency)?.numeric;
    if (found === undefined || numeric === undefined) throw new Error(`account ${route.accountId} has no balance or an unknown currency`);
    return { outcome: "answered", code: approvedCode, effectKey: null, accountId: route.accountId, extra: { 54: availableBalanceAmount(message, numeric, found.balanceMinor) } };
  }
  const isHold = isHoldKind(kind);
  const done: OriginalOutcome = isHold ? "held" : "posted";
  if (amount.amountMinor === 0n) return { outcome: done, code: approvedCode, effectKey: null, accountId: route.accountId };

  const effectKey = `${naturalKey}:${isHold ? "hold" : "posting"}`;
  const accountOf = (name: RuleAccount, customer: string) =>
    name === "customer" ? customer : name === "holds" ? gatewayAccounts.holds(amount.currency) : gatewayAccounts.scheme(amount.currency);
  const transferOf = (customer: string) => ({
    tenantId, transferKey: effectKey, kind: rule.kind, valueDate: new Date().toISOString().slice(0, 10),
    sourceRef: `iso8583:${message.mti}:${naturalKey}`,
    legs: [
      { accountId: accountOf(rule.debit, customer), direction: "D", amountMinor: amount.amountMinor, currency: amount.currency },
      { accountId: accountOf(rule.credit, customer), direction: "C", amountMinor: amount.amountMinor, currency: amount.currency },
    ] satisfies Leg[],
  });
  const posted = await postTransfer(tx, transferOf(route.accountId));
  if (posted.ok) return { outcome: done, code: approvedCode, effectKey, accountId: route.accountId };
  if (posted.error.code !== "LEDGER_INSUFFICIENT_FUNDS") throw new Error(`card ${kind} refused by the ledger: ${posted.error.code}`);
  if (!isAdviceKind(kind)) return declined("insufficientFunds", route.accountId);
  // An advice reports what the scheme already decided in our stead: it is applied as advised. A
  // customer account cannot go below zero, so what it cannot cover waits in suspense for review.
  const toSuspense = await postTransfer(tx, transferOf(gatewayAccounts.suspense(amount.currency)));
  if (!toSuspense.ok) throw new Error(`card advice refused by the ledger: ${toSuspense.error.code}`);
  return { outcome: "posted_to_suspense", code: "acknowledged", effectKey, accountId: route.accountId };
}

export interface OriginalForReversal {
  outcome: string;
  effect_key: string | null;
  account_id: string | null;
  amount_minor: bigint;
  currency: string | null;
  mti_class: string;
}

export type UndoOutcome = "released" | "reversed" | "reversed_to_suspense";

/**
 * The reverse of the original's transfer for `undoMinor` (its whole amount, or the difference to
 * field 95's actual amount): every leg of the stored transfer mirrored, under one key derived from
 * the original's key, so a second reversal of one original can never post. Reversing a credit
 * (a refund) the customer already spent takes the customer's side from the gateway suspense account.
 */
export async function undoOriginal(tx: Tx, tenantId: string, originalKey: string, original: OriginalForReversal & { effect_key: string }, undoMinor: bigint, message: Message): Promise<{ outcome: UndoOutcome; effectKey: string }> {
  const isHold = original.mti_class === "010" || original.mti_class === "012";
  const effectKey = `${originalKey}:${isHold ? "release" : "reversal"}`;
  const stored = (await storedTransfers(tx, tenantId, [original.effect_key])).get(original.effect_key);
  if (stored === undefined) throw new Error(`original transfer ${original.effect_key} is not in the ledger`);
  const mirrored = (replaceAccount?: { from: string; to: string }) => ({
    tenantId, transferKey: effectKey, kind: isHold ? "card_hold_release" : "card_reversal", valueDate: new Date().toISOString().slice(0, 10),
    sourceRef: `iso8583:${message.mti}:${originalKey}`,
    legs: [...stored.entries.values()].map((entry): Leg => ({
      accountId: entry.account_id === replaceAccount?.from ? replaceAccount.to : entry.account_id,
      direction: entry.direction === "D" ? "C" : "D", amountMinor: undoMinor, currency: entry.currency,
    })),
  });
  const posted = await postTransfer(tx, mirrored());
  if (posted.ok) return { outcome: isHold ? "released" : "reversed", effectKey };
  if (posted.error.code !== "LEDGER_INSUFFICIENT_FUNDS" || original.account_id === null) throw new Error(`reversal refused by the ledger: ${posted.error.code}`);
  const toSuspense = await postTransfer(tx, mirrored({ from: original.account_id, to: gatewayAccounts.suspense(original.currency ?? "") }));
  if (!toSuspense.ok) throw new Error(`reversal refused by the ledger: ${toSuspense.error.code}`);
  return { outcome: "reversed_to_suspense", effectKey };
}
