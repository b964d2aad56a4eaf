import { describe, expect, it } from "vitest";
import type { CanonicalRecord } from "../../src/normalize/canonical-record.ts";
import { compensationFor, loadPostingRules, newPaymentTransferKeyOf, postingRuleFor, replacementTransferKeyOf, reversalFor, transferFor, transferKeyOf } from "../../src/normalize/posting-rules.ts";

const accounts = { settlement: "partner.fed.settlement.USD", suspense: "partner.fed.suspense.USD" };

function record(kind: string, extra: Partial<CanonicalRecord> = {}): CanonicalRecord {
  return {
    tenantId: "t", channel: "ach", naturalKey: "ach:23138010:231380100000001:1234567890:PPD:250305", intentId: "ach:231380100000001", kind,
    amount: 10_000n, currency: "USD", valueDate: "2025-03-05", fingerprint: "f".repeat(64), source: { fileId: "fil_1", position: "line 3" },
    attributes: { transactionCode: kind === "debit" ? "27" : "22", receiverAlias: "aba:091000019:1000001" }, ...extra,
  };
}

describe("posting rules as data", () => {
  it("posts an ACH credit as settlement debited and the counterparty credited, keyed by the natural key", () => {
    const credit = record("credit");
    const rule = postingRuleFor(credit);
    expect(rule).toMatchObject({ action: "post", counterparty: "receiverAlias" });
    const transfer = transferFor(credit, rule!, accounts, "cust-1");
    expect(transfer).toMatchObject({ transferKey: `${credit.naturalKey}:post`, kind: "ach-credit", valueDate: "2025-03-05", sourceRef: "ach:fil_1:line 3" });
    expect(transfer.legs).toEqual([
      { accountId: accounts.settlement, direction: "D", amountMinor: 10_000n, currency: "USD" },
      { accountId: "cust-1", direction: "C", amountMinor: 10_000n, currency: "USD" },
    ]);
  });

  it("posts an ACH debit the other way round", () => {
    const debit = record("debit");
    const transfer = transferFor(debit, postingRuleFor(debit)!, accounts, "cust-1");
    expect(transfer.legs.map((l) => `${l.direction} ${l.accountId}`)).toEqual(["D cust-1", `C ${accounts.settlement}`]);
  });

  it("sends the counterparty leg to the partner's suspense account when the alias resolves nowhere", () => {
    const credit = record("credit");
    expect(transferFor(credit, postingRuleFor(credit)!, accounts, undefined).legs[1]?.accountId).toBe(accounts.suspense);
  });

  it("records zero-dollar entries, notifications of change and prenotes without posting", () => {
    expect(postingRuleFor(record("credit", { amount: 0n }))?.action).toBe("record");
    expect(postingRuleFor(record("noc", { amount: 0n }))?.action).toBe("record");
    expect(postingRuleFor(record("prenote", { amount: 0n }))?.action).toBe("record");
  });

  it("records a zero-amount return (of a prenote) instead of reversing anything", () => {
    expect(postingRuleFor(record("return", { amount: 0n }))?.action).toBe("record");
  });

  it("finds no rule for a kind nobody described, so the record is rejected rather than guessed", () => {
    expect(postingRuleFor(record("unknown"))).toBeUndefined();
  });

  it("reverses a return's original legs for the return's amount", () => {
    const returned = record("return", { naturalKey: "ach:09100001:091000010000001:1234567890:PPD:250305", amount: 10_000n });
    expect(postingRuleFor(returned)?.action).toBe("reverse-original");
    const reversal = reversalFor(returned, [{ accountId: accounts.settlement, direction: "D" }, { accountId: "cust-1", direction: "C" }]);
    expect(reversal.transferKey).toBe(transferKeyOf(returned.naturalKey));
    expect(reversal.legs.map((l) => `${l.direction} ${l.accountId} ${l.amountMinor}`)).toEqual([`C ${accounts.settlement} 10000`, "D cust-1 10000"]);
  });

  it("posts an ISO 20022 credit to the creditor and a pain.001 initiation from the debtor", () => {
    const credit = record("credit", { channel: "iso20022", attributes: { creditorAlias: "iban:DE89370400440532013000" } });
    expect(postingRuleFor(credit)).toMatchObject({ action: "post", counterparty: "creditorAlias" });
    const initiation = record("initiation", { channel: "iso20022", attributes: { debtorAlias: "acct:123" } });
    expect(transferFor(initiation, postingRuleFor(initiation)!, accounts, "cust-9").legs.map((l) => `${l.direction} ${l.accountId}`)).toEqual(["D cust-9", `C ${accounts.settlement}`]);
  });

  it("derives the keys of a review decision's postings from the natural key and the review id, so a repeated decision is a replay", () => {
    expect(replacementTransferKeyOf("k", "rev_1")).toBe("k:replace:rev_1");
    expect(newPaymentTransferKeyOf("k", "rev_1")).toBe("k:new:rev_1");
  });

  it("compensates a transfer under <its key>:compensate with every leg mirrored, marked as a technical correction", () => {
    const original = { tenantId: "t", transferKey: "k:post", valueDate: "2025-03-05", legs: [
      { accountId: accounts.settlement, direction: "D" as const, amountMinor: 20_000n, currency: "USD" },
      { accountId: "payee", direction: "C" as const, amountMinor: 20_000n, currency: "USD" },
    ] };
    expect(compensationFor(original, "review:rev_1")).toEqual({
      tenantId: "t", transferKey: "k:post:compensate", kind: "correction-compensation", valueDate: "2025-03-05", sourceRef: "review:rev_1",
      legs: [{ accountId: accounts.settlement, direction: "C", amountMinor: 20_000n, currency: "USD" }, { accountId: "payee", direction: "D", amountMinor: 20_000n, currency: "USD" }],
    });
  });

  it("refuses at load a rule whose legs do not balance one debit against one credit", () => {
    expect(() => loadPostingRules({ channel: "ach", rules: [{ kind: "credit", action: "post", counterparty: "x", legs: [{ direction: "D", account: "settlement" }, { direction: "D", account: "counterparty" }] }] })).toThrow(/one debit and one credit/);
    expect(() => loadPostingRules({ channel: "ach", rules: [{ kind: "credit", action: "post", legs: [{ direction: "D", account: "settlement" }, { direction: "C", account: "counterparty" }] }] })).toThrow(/counterparty/);
    expect(() => loadPostingRules({ channel: "ach", rules: [{ kind: "credit", action: "teleport" }] })).toThrow(/action/);
  });
});
