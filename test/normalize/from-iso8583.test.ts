import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { processingRuleOf } from "../../src/cards/processing-codes.ts";
import { cardRequest } from "../support/scheme-simulator.ts";
import { cardOriginalRecord, identityOf, naturalKeyOf, type CardOriginal, type MessageKind } from "../../src/normalize/from-iso8583.ts";
import { loadPostingRules, postingRuleFor, suspenseTransferFor, transferFor } from "../../src/normalize/posting-rules.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";

const cardHash = "a".repeat(64);
const gatewayAccounts = { holds: "iso8583-holds-EUR", scheme: "iso8583-scheme-EUR", suspense: "iso8583-suspense-EUR" };

function originalOf(message: Message, kind: MessageKind, overrides: Partial<CardOriginal> = {}): CardOriginal {
  const identity = identityOf(message);
  if (identity === undefined) throw new Error("a test message has its identity fields");
  return {
    tenantId: "t", mti: message.mti, messageKind: kind, identity, retrievalReferenceNumber: String(message.fields[37]), cardHash,
    amountMinor: BigInt(String(message.fields[4])), currency: "EUR", transactionType: String(message.fields[3]).slice(0, 2),
    rule: processingRuleOf(message, kind), account: { accountId: "cust-1", currency: "EUR" }, gatewayAccounts,
    position: "mti=0100 stan=000042 rrn=1", connection: "scheme-a", valueDate: "2026-12-03", ...overrides,
  };
}

const purchase = (mti = "0100", processingCode = "000000") => cardRequest({ mti, pan: "4761739001010119", amountMinor: 1_250n, stan: 42, transmission: "1203101500", acquirer: "423935", processingCode });

describe("ISO 8583 originals as canonical records (src/normalize/from-iso8583.ts)", () => {
  it("keys an original by MTI class, acquirer and forwarding institution padded to 11, STAN and transmission time, so a 0101 repeat has its 0100's key", () => {
    const record = cardOriginalRecord(originalOf(purchase(), "authorization")).record;
    expect(record?.naturalKey).toBe("iso8583:010:00000423935:00000000000:000042:1203101500");
    expect(naturalKeyOf(identityOf(purchase("0101")) as NonNullable<ReturnType<typeof identityOf>>)).toBe(record?.naturalKey);
  });

  it("fingerprints a purchase as the gateway always stored it: sha256 of class, card hash, amount and currency joined by U+001F, without a type", () => {
    const record = cardOriginalRecord(originalOf(purchase(), "authorization")).record;
    expect(record?.fingerprint).toBe(createHash("sha256").update(["010", cardHash, "1250", "EUR"].join("\u001f")).digest("hex"));
  });

  it("gives a refund another fingerprint than a purchase of the same amount: the transaction type is part of what it says", () => {
    const refund = cardOriginalRecord(originalOf(purchase("0200", "200000"), "financial")).record;
    expect(refund?.fingerprint).toBe(createHash("sha256").update(["020", cardHash, "1250", "EUR", "type:20"].join("\u001f")).digest("hex"));
  });

  it("names the processing code's accounts in the attributes the posting rule's legs read: a refund debits the scheme and credits the card's account", () => {
    const record = cardOriginalRecord(originalOf(purchase("0200", "200000"), "financial")).record;
    expect(record).toMatchObject({ channel: "iso8583", kind: "financial", amount: 1_250n, currency: "EUR", source: { ref: `iso8583:0200:${record?.naturalKey}` } });
    expect(record?.attributes).toMatchObject({ debitAccount: gatewayAccounts.scheme, creditAccount: "cust-1", transferKind: "card_refund", suspenseAccount: gatewayAccounts.suspense });
  });

  it("makes a refund authorization an approval and a balance inquiry a balance_inquiry, both recorded without a posting", () => {
    const approval = cardOriginalRecord(originalOf(purchase("0100", "200000"), "authorization")).record;
    const inquiry = cardOriginalRecord(originalOf(purchase("0100", "312000"), "authorization")).record;
    expect([approval?.kind, inquiry?.kind]).toEqual(["approval", "balance_inquiry"]);
    expect([postingRuleFor(approval!)?.action, postingRuleFor(inquiry!)?.action]).toEqual(["record", "record"]);
  });

  it("rejects an unknown card, a currency the card's account does not serve and an unsupported processing code, naming the field", () => {
    const rejections = [
      cardOriginalRecord(originalOf(purchase(), "authorization", { account: undefined })),
      cardOriginalRecord(originalOf(purchase(), "authorization", { account: { accountId: "cust-1", currency: "USD" } })),
      cardOriginalRecord(originalOf(purchase("0100", "500000"), "authorization")),
    ];
    expect(rejections.map((r) => [r.record, r.rejection?.code, r.rejection?.position.fieldPath])).toEqual([
      [undefined, "ISO8583_CARD_UNKNOWN", ["2"]],
      [undefined, "ISO8583_CURRENCY_NOT_SERVED", ["49"]],
      [undefined, "ISO8583_PROCESSING_CODE_UNSUPPORTED", ["3"]],
    ]);
  });
});

describe("posting rules of the ISO 8583 channel (protocols/posting-rules/iso8583.json)", () => {
  it("posts an authorization as a hold under <key>:hold with the processing code's transfer kind, customer debited, holds credited", () => {
    const record = cardOriginalRecord(originalOf(purchase(), "authorization")).record!;
    const transfer = transferFor(record, postingRuleFor(record)!, undefined, undefined);
    expect(transfer).toMatchObject({ transferKey: `${record.naturalKey}:hold`, kind: "card_hold", valueDate: "2026-12-03", sourceRef: `iso8583:0100:${record.naturalKey}` });
    expect(transfer.legs.map((l) => `${l.direction} ${l.accountId} ${l.amountMinor}`)).toEqual(["D cust-1 1250", `C ${gatewayAccounts.holds} 1250`]);
  });

  it("posts a financial advice under <key>:posting and, when the account cannot cover it, takes the debit leg from the suspense account the record names", () => {
    const record = cardOriginalRecord(originalOf(purchase("0220", "010000"), "financialAdvice")).record!;
    const rule = postingRuleFor(record)!;
    expect(rule).toMatchObject({ kind: "financial_advice", insufficientFunds: "suspense", suspenseAttribute: "suspenseAccount" });
    const transfer = transferFor(record, rule, undefined, undefined);
    expect(transfer).toMatchObject({ transferKey: `${record.naturalKey}:posting`, kind: "card_cash_posting" });
    const fromSuspense = suspenseTransferFor(record, rule, transfer);
    expect({ ...fromSuspense, legs: undefined }).toEqual({ ...transfer, legs: undefined });
    expect(fromSuspense.legs.map((l) => `${l.direction} ${l.accountId}`)).toEqual([`D ${gatewayAccounts.suspense}`, `C ${gatewayAccounts.scheme}`]);
  });

  it("refuses at load a fixed transfer kind together with an attribute, a suspense option without its attribute, and posting options on a record rule", () => {
    const legs = [{ direction: "D", account: "named", attribute: "a" }, { direction: "C", account: "named", attribute: "b" }];
    expect(() => loadPostingRules({ channel: "iso8583", rules: [{ kind: "x", action: "post", legs, transferKind: "k", transferKindAttribute: "kind" }] })).toThrow(/not both/);
    expect(() => loadPostingRules({ channel: "iso8583", rules: [{ kind: "x", action: "post", legs, insufficientFunds: "suspense" }] })).toThrow(/suspense account/);
    expect(() => loadPostingRules({ channel: "iso8583", rules: [{ kind: "x", action: "post", legs, insufficientFunds: "decline", suspenseAttribute: "s" }] })).toThrow(/insufficientFunds/);
    expect(() => loadPostingRules({ channel: "iso8583", rules: [{ kind: "x", action: "record", transferKindAttribute: "kind" }] })).toThrow(/posting options/);
  });
});
