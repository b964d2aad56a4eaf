import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { availableBalanceAmount, loadProcessingCodes, processingRuleOf } from "../../src/cards/processing-codes.ts";
import { replacementAmountOf, replacementAmountsField } from "../../src/cards/replacement-amounts.ts";
import {
  iso87AsciiDictionary, iso87BinaryDictionary, jposIso87aDictionary, jposIso87bDictionary, pack, unpack, type Message,
} from "../../src/protocols/iso8583/index.ts";

function withCode(code: string | undefined, extra: Record<number, string> = {}): Message {
  const fields: Record<number, string> = { ...extra };
  if (code !== undefined) fields[3] = code;
  return { mti: "0100", fields };
}

describe("the processing-code table (protocols/iso8583/processing-codes.json)", () => {
  it("serves purchase, cash, refund and balance inquiry by the first two digits, per message kind", () => {
    expect(processingRuleOf(withCode("000000"), "authorization")).toEqual({ action: "post", kind: "card_hold", debit: "customer", credit: "holds" });
    expect(processingRuleOf(withCode("011000"), "financial")).toEqual({ action: "post", kind: "card_cash_posting", debit: "customer", credit: "scheme" });
    expect(processingRuleOf(withCode("200000"), "authorization")).toEqual({ action: "approve" });
    expect(processingRuleOf(withCode("200000"), "financialAdvice")).toEqual({ action: "post", kind: "card_refund", debit: "scheme", credit: "customer" });
    expect(processingRuleOf(withCode("310000"), "authorization")).toEqual({ action: "balance" });
  });

  it("has no rule for an unlisted code, a listed code in another message kind, or a field 3 that is not six digits", () => {
    expect(processingRuleOf(withCode("400000"), "authorization")).toBeUndefined();
    expect(processingRuleOf(withCode("310000"), "financial")).toBeUndefined();
    expect(processingRuleOf(withCode("00000"), "authorization")).toBeUndefined();
  });

  it("reads an absent field 3 as a purchase", () => {
    expect(processingRuleOf(withCode(undefined), "financial")).toMatchObject({ action: "post", kind: "card_posting" });
  });

  it("refuses a table whose rule moves money between two accounts other than the card's", () => {
    const file = { unsupportedResponse: "12", codes: { "50": { name: "bill payment", financial: { action: "post", kind: "x", debit: "scheme", credit: "holds" } } } };
    expect(() => loadProcessingCodes(file)).toThrow(/moves money on the card's account/);
  });

  it("refuses a table whose unsupported answer is not a response code", () => {
    expect(() => loadProcessingCodes({ unsupportedResponse: "X9", codes: {} })).toThrow(/response-code table/);
  });

  it("writes field 54 as account type, amount type 02, currency, sign and twelve digits", () => {
    expect(availableBalanceAmount(withCode("312000"), "978", 12_345n)).toBe("2002978C000000012345");
    expect(availableBalanceAmount(withCode("310000"), "840", -5n)).toBe("0002840D000000000005");
  });
});

describe("field 95, replacement amounts", () => {
  it("reads the actual transaction amount of a partial reversal", () => {
    expect(replacementAmountOf(withCode("000000", { 95: replacementAmountsField(6_000n) }))).toEqual({ kind: "actual", actualMinor: 6_000n });
  });

  it("reads an absent or all-zero field 95 as a full reversal", () => {
    expect(replacementAmountOf(withCode("000000"))).toEqual({ kind: "absent" });
    expect(replacementAmountOf(withCode("000000", { 95: replacementAmountsField(0n) }))).toEqual({ kind: "absent" });
  });

  it("reports a field 95 that is not two amounts and two signed fees as malformed", () => {
    expect(replacementAmountOf(withCode("000000", { 95: "000000006000000000006000X00000000C00000000" }))).toEqual({ kind: "malformed" });
    expect(replacementAmountOf(withCode("000000", { 95: "6000" }))).toEqual({ kind: "malformed" });
  });
});

describe("field 3 and field 95 readers on arbitrary input (property-based)", () => {
  it("give a rule or none, and a replacement amount or malformed, for any field content, never an exception", () => {
    const kinds = ["authorization", "authorizationAdvice", "financial", "financialAdvice"] as const;
    fc.assert(fc.property(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), (field3, field95) => {
      const message = withCode(field3, { 95: field95 });
      const rule = processingRuleOf(message, "authorization");
      expect(rule === undefined || ["post", "approve", "balance"].includes(rule.action)).toBe(true);
      for (const kind of kinds) processingRuleOf(message, kind);
      expect(["absent", "actual", "malformed"]).toContain(replacementAmountOf(message).kind);
    }), { numRuns: 1_000 });
  });

  it("read back the actual amount they wrote, for any amount field 95 holds", () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999n }), (actualMinor) => {
      expect(replacementAmountOf(withCode("000000", { 95: replacementAmountsField(actualMinor) }))).toEqual({ kind: "actual", actualMinor });
    }), { numRuns: 500 });
  });
});

describe("the new response and request fields on the wire", () => {
  // moov-io's spec87ascii defines no field 95 (as moov's own spec): it reads traces, it is no endpoint's layout.
  const dictionaries = [iso87AsciiDictionary, iso87BinaryDictionary, jposIso87aDictionary, jposIso87bDictionary];

  it.each(dictionaries.map((d) => [d.name, d] as const))("a balance answer (field 54) and a partial reversal (field 95) pack and read back with %s", (_name, dictionary) => {
    const answer: Message = { mti: "0110", fields: { 3: "312000", 11: "000123", 39: "00", 54: availableBalanceAmount(withCode("312000"), "978", 98_765n) } };
    const reversal: Message = { mti: "0400", fields: { 3: "000000", 4: "000000010000", 11: "000124", 95: replacementAmountsField(6_000n) } };
    for (const message of [answer, reversal]) {
      const packed = pack(message, dictionary);
      if (!packed.ok) throw new Error(packed.error.message);
      expect(unpack(packed.value, dictionary)).toEqual({ ok: true, value: message });
    }
  });
});
