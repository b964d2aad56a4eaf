import { createHash } from "node:crypto";
import { finding, type Finding } from "../errors/finding.ts";
import { currencyByNumeric } from "../protocols/iso4217/currency.ts";
import { de, textField, type Message, type Subfields } from "../protocols/iso8583/index.ts";
import type { ReceivedRecord } from "./received-record.ts";

/**
 * ISO 8583 originals (0100/0101, 0120/0121, 0200/0201, 0220/0221) and reversals (0400/0401,
 * 0420/0421) as canonical records, and the card channel's key rules: the natural key of
 * docs/decisions/0077 (MTI class + 32 + 33 + 11 + 7) and the fingerprint the gateway has always
 * stored, so that rows written before the record core still compare equal. Pure: no database, no
 * socket, no clock.
 */

export interface TransactionIdentity {
  mtiClass: string;
  acquirer: string;        // DE 32, padded to 11
  forwarding: string;      // DE 33, padded to 11 ("00000000000" when absent)
  stan: string;            // DE 11
  transmission: string;    // DE 7 MMDDhhmmss
}

// Institution identification codes (32, 33) are LL numeric fields of up to 11 digits; field 90
// carries them zero-padded to 11. Keys use the padded form so that both spellings meet.
export function institutionCode(value: string | undefined): string {
  return (value ?? "").padStart(11, "0");
}

/** MTI without its origin digit: 0100 and its repeat 0101 are one transaction ("010"). */
export function mtiClassOf(mti: string): string {
  return mti.slice(0, 3);
}

/** The natural key (docs/decisions/0077): MTI class + 32 + 33 + 11 + 7. */
export function naturalKeyOf(identity: TransactionIdentity): string {
  const { mtiClass, acquirer, forwarding, stan, transmission } = identity;
  return `iso8583:${mtiClass}:${acquirer}:${forwarding}:${stan}:${transmission}`;
}

export function identityOf(message: Message): TransactionIdentity | undefined {
  const stan = textField(message, de.systemTraceAuditNumber);
  const transmission = textField(message, de.transmissionDateTime);
  const acquirer = textField(message, de.acquiringInstitutionIdentificationCode);
  if (stan === undefined || transmission === undefined || acquirer === undefined) return undefined;
  const forwarding = institutionCode(
    textField(message, de.forwardingInstitutionIdentificationCode),
  );
  return {
    mtiClass: mtiClassOf(message.mti), acquirer: institutionCode(acquirer), forwarding, stan,
    transmission,
  };
}

/** The original's identity from a reversal's field 90 (original data elements). */
export function originalIdentityOf(message: Message): TransactionIdentity | undefined {
  const value = message.fields[de.originalDataElements];
  if (value === undefined || typeof value === "string" || Array.isArray(value)) return undefined;
  const sub = value as Subfields;
  const mti = sub.originalMessageTypeIdentifier;
  const stan = sub.originalSystemTraceAuditNumber;
  const transmission = sub.originalTransmissionDateTime;
  if (
    mti === undefined || stan === undefined || transmission === undefined || !/^\d{4}$/.test(mti)
  ) {
    return undefined;
  }
  return {
    mtiClass: mtiClassOf(mti),
    acquirer: institutionCode(sub.originalAcquiringInstitutionIdentificationCode),
    forwarding: institutionCode(sub.originalForwardingInstitutionIdentificationCode), stan,
    transmission,
  };
}

/**
 * Hash of a card message's economically meaningful parts, in the gateway's historical form (sha256
 * over the parts joined by U+001F).
 */
export function messageFingerprintOf(parts: readonly string[]): string {
  return createHash("sha256").update(parts.join("\u001f")).digest("hex");
}

/**
 * An original's fingerprint: class, card (keyed hash), amount, currency, and the transaction type
 * (a refund is not a purchase). A purchase (type 00) leaves the type out, as it did before
 * processing codes were served, so its stored fingerprints still compare equal.
 */
export function originalFingerprintOf(original: {
  mtiClass: string;
  cardHash: string;
  amountMinor: bigint;
  currency: string;
  transactionType: string;
}): string {
  return messageFingerprintOf([
    original.mtiClass, original.cardHash, original.amountMinor.toString(), original.currency,
    ...(original.transactionType === "00" ? [] : [`type:${original.transactionType}`]),
  ]);
}

/**
 * What a processing code (DE 3) does for one kind of message:
 * protocols/iso8583/processing-codes.json.
 */
export type MessageKind = "authorization" | "authorizationAdvice" | "financial" | "financialAdvice";
export type ProcessingAccount = "customer" | "holds" | "scheme";
export type ProcessingRule =
  | { action: "post"; kind: string; debit: ProcessingAccount; credit: ProcessingAccount }
  | { action: "approve" }
  | { action: "balance" };

/**
 * The ledger accounts the card channel posts against, one of each per tenant and currency, opened
 * with the tenant's first card of that currency. Named here, below the card-messages service and
 * reconciliation, because both post to them (the scheme totals correct the clearing account).
 */
export const gatewayAccounts = {
  // kind holds: authorized, not yet settled
  holds: (currency: string) => `iso8583-holds-${currency}`,
  // kind clearing: owed to the scheme for settlement
  scheme: (currency: string) => `iso8583-scheme-${currency}`,
  // kind suspense: advices the customer account could not cover
  suspense: (currency: string) => `iso8583-suspense-${currency}`,
};

/** An original whose format the gateway checked, with what routing found for its card. */
export interface CardOriginal {
  tenantId: string;
  mti: string;
  messageKind: MessageKind;
  identity: TransactionIdentity;
  retrievalReferenceNumber: string | undefined;    // DE 37 RRN
  cardHash: string;
  amountMinor: bigint;
  currency: string;                                // ISO 4217 alphabetic, from DE 49
  transactionType: string;                         // DE 3 positions 1-2
  // undefined: the code is not served for this kind of message
  rule: ProcessingRule | undefined;
  // the card's account; undefined: the card is not registered
  account: { accountId: string; currency: string } | undefined;
  // the issuer's gateway accounts in the message's currency
  gatewayAccounts: { holds: string; scheme: string; suspense: string };
  position: string;                                // identifiers only: MTI, STAN, RRN
  connection: string;
  valueDate: string;                               // YYYY-MM-DD, the day the message was decided
  settlementDate?: string;                         // YYYY-MM-DD: DE 15 or the cut-over (0101)
}

/**
 * The record kind per message kind for a processing code that posts:
 * protocols/posting-rules/iso8583.json has one rule each.
 */
const postingKinds: Readonly<Record<MessageKind, string>> = {
  authorization: "authorization", authorizationAdvice: "authorization_advice",
  financial: "financial", financialAdvice: "financial_advice",
};

/**
 * An original as the canonical record
 * `iso8583:<class>:<acquirer>:<forwarding>:<stan>:<transmission>`. Its rule's accounts (customer,
 * holds, scheme) are resolved into the attributes the posting rule's named legs read
 * (`debitAccount`, `creditAccount`), with the transfer kind the processing code names and the
 * suspense account an advice falls back on. Input problems (a card nobody registered, a currency
 * the card's account does not serve, a processing code not served) reject the record: it claims no
 * key.
 */
export function cardOriginalRecord(original: CardOriginal): ReceivedRecord {
  const base = { index: 1, position: original.position, linkIds: [], originalIds: [] };
  const rejection = inputProblemOf(original);
  if (rejection !== undefined) return { ...base, rejection };
  const rule = original.rule as ProcessingRule;
  const account = original.account as NonNullable<CardOriginal["account"]>;
  const naturalKey = naturalKeyOf(original.identity);
  const attributes: Record<string, string> = {
    mti: original.mti, transactionType: original.transactionType,
    customerAccount: account.accountId,
  };
  if (original.retrievalReferenceNumber !== undefined) {
    attributes.retrievalReferenceNumber = original.retrievalReferenceNumber;
  }
  if (rule.action === "post") {
    const accountOf = (name: ProcessingAccount) =>
      name === "customer" ? account.accountId : original.gatewayAccounts[name];
    Object.assign(attributes, {
      debitAccount: accountOf(rule.debit), creditAccount: accountOf(rule.credit),
      transferKind: rule.kind, suspenseAccount: original.gatewayAccounts.suspense,
    });
  }
  return {
    ...base,
    record: {
      tenantId: original.tenantId,
      channel: "iso8583",
      naturalKey,
      intentId: original.retrievalReferenceNumber ?? naturalKey,
      kind:
        rule.action === "post"
          ? postingKinds[original.messageKind]
          : rule.action === "approve"
            ? "approval"
            : "balance_inquiry",
      amount: original.amountMinor,
      currency: original.currency,
      valueDate: original.valueDate,
      ...(original.settlementDate === undefined ? {} : { settlementDate: original.settlementDate }),
      fingerprint: originalFingerprintOf({ ...original, mtiClass: original.identity.mtiClass }),
      source: {
        connection: original.connection, position: original.position,
        ref: `iso8583:${original.mti}:${naturalKey}`,
      },
      attributes,
    },
  };
}

/**
 * In the order the gateway has always declined them: card (14), then account currency, then
 * processing code (both 12).
 */
function inputProblemOf(original: CardOriginal): Finding | undefined {
  if (original.account === undefined) {
    return finding("ISO8583_CARD_UNKNOWN", "no card of this issuer has this card number", {
      fieldPath: ["2"],
    });
  }
  if (original.account.currency !== original.currency) {
    return finding(
      "ISO8583_CURRENCY_NOT_SERVED",
      `the card's account is held in ${original.account.currency}, the message is in ` +
      `${original.currency}`,
      { fieldPath: ["49"] },
    );
  }
  if (original.rule === undefined) {
    return finding(
      "ISO8583_PROCESSING_CODE_UNSUPPORTED",
      `transaction type ${original.transactionType} is not served for this kind of message`,
      { fieldPath: ["3"] },
    );
  }
  return undefined;
}

/**
 * A reversal (0400/0401, 0420/0421) whose format the gateway checked, with what the channel's store
 * says of its original.
 */
export interface CardReversal {
  tenantId: string;
  mti: string;
  identity: TransactionIdentity;                  // the reversal's own
  originalIdentity: TransactionIdentity;          // from field 90
  retrievalReferenceNumber: string | undefined;   // DE 37 RRN
  cardHash: string;                               // "" when the reversal carries no PAN
  amountMinor: bigint;                            // DE 4 as sent
  // DE 49 as sent, for the fingerprint ("" when absent)
  currencyField: string;
  actualMinor: bigint | undefined;                // DE 95 actual amount; undefined: a full reversal
  /**
   * The original as answered (its amount and currency), when it was; undefined: the original is
   * unknown.
   */
  original: { amountMinor: bigint; currency: string } | undefined;
  // the issuer's gateway suspense account in a currency
  suspenseAccount: (currency: string) => string;
  position: string;
  connection: string;
  valueDate: string;                              // YYYY-MM-DD, the day the message was decided
  settlementDate?: string;                        // YYYY-MM-DD: DE 15 or the cut-over (0101)
}

/**
 * A reversal's fingerprint, the gateway's since 0028: card, amount, currency as sent, and the
 * actual amount when partial.
 */
export function reversalFingerprintOf(
  reversal: Pick<CardReversal, "cardHash" | "amountMinor" | "currencyField" | "actualMinor">,
): string {
  return messageFingerprintOf([
    "reversal", reversal.cardHash, reversal.amountMinor.toString(), reversal.currencyField,
    ...(reversal.actualMinor === undefined ? [] : [`actual:${reversal.actualMinor}`]),
  ]);
}

/**
 * A reversal as the canonical record of its own key (04x class + 32 + 33 + 11 + 7), naming its
 * original's key (field 90). Its amount is what it undoes: the original's amount less field 95's
 * actual amount (all of it for a full reversal). An actual amount above the original's is input
 * the scheme got wrong: rejected, so it claims no key and a valid reversal can follow. Without a
 * known original the amount is what the message says it undoes; an orphan moves nothing.
 */
export function cardReversalRecord(reversal: CardReversal): ReceivedRecord {
  const base = { index: 1, position: reversal.position, linkIds: [], originalIds: [] };
  const { original, actualMinor } = reversal;
  if (original !== undefined && actualMinor !== undefined && actualMinor > original.amountMinor) {
    const rejection = finding(
      "ISO8583_ACTUAL_AMOUNT_ABOVE_ORIGINAL",
      `the actual amount ${actualMinor} is above the original's ${original.amountMinor}`,
      { fieldPath: ["95"] },
    );
    return { ...base, rejection };
  }
  const naturalKey = naturalKeyOf(reversal.identity);
  const originalKey = naturalKeyOf(reversal.originalIdentity);
  const stated = reversal.amountMinor - (actualMinor ?? 0n);
  const amount =
    original !== undefined ? original.amountMinor - (actualMinor ?? 0n) : stated > 0n ? stated : 0n;
  // The original's currency when it is known (the undo is in the original's money); else the
  // message's; else "no currency".
  const currency = original?.currency ?? currencyByNumeric(reversal.currencyField)?.code ?? "XXX";
  const attributes: Record<string, string> = {
    mti: reversal.mti, suspenseAccount: reversal.suspenseAccount(currency),
  };
  if (actualMinor !== undefined) attributes.actualAmount = actualMinor.toString();
  return {
    ...base,
    record: {
      tenantId: reversal.tenantId,
      channel: "iso8583",
      naturalKey,
      intentId: reversal.retrievalReferenceNumber ?? originalKey,
      kind: "reversal",
      amount,
      currency,
      valueDate: reversal.valueDate,
      ...(reversal.settlementDate === undefined ? {} : { settlementDate: reversal.settlementDate }),
      original: originalKey,
      fingerprint: reversalFingerprintOf(reversal),
      source: {
        connection: reversal.connection, position: reversal.position,
        ref: `iso8583:${reversal.mti}:${originalKey}`,
      },
      attributes,
    },
  };
}
