import { describe, expect, it } from "vitest";
import { apiRefundKeyOf, httpRefundRecord } from "../../src/normalize/from-http.ts";
import { loadPostingRules, partialUndoFor, postingRuleFor } from "../../src/normalize/posting-rules.ts";

/** The API refund's record and its `undo-named-original` rule (protocols/posting-rules/api.json; docs/decisions/0038). */
describe("undo of part of a named original, as data", () => {
  const arrival = { position: "POST /v1/refunds", sourceRef: "http:pay_1", valueDate: "2026-12-03" };
  const refundOf = (amountMinor: bigint, paymentClientReference = "order-1") =>
    httpRefundRecord("t", {
      clientReference: "rf-1", paymentClientReference, amountMinor, currency: "USD",
    }, arrival).record;

  it("keys a refund's posting by its intent, api:<client_reference>:refund of kind refund, the payment's legs mirrored for the refund's amount", () => {
    const refund = refundOf(250n);
    if (refund === undefined) throw new Error("the refund has a record");
    const rule = postingRuleFor(refund);
    expect(rule?.action).toBe("undo-named-original");
    if (rule === undefined) throw new Error("the refund has a rule");
    const undo = partialUndoFor(refund, rule, [{ accountId: "alice", direction: "D" }, { accountId: "bob", direction: "C" }]);
    expect([undo.transferKey, undo.kind, undo.sourceRef]).toEqual(["api:rf-1:refund", "refund", "http:pay_1"]);
    expect(undo.legs.map((l) => `${l.direction} ${l.accountId} ${l.amountMinor}`)).toEqual(["C alice 250", "D bob 250"]);
  });

  it("gives a refund its own key, never a payment's, and a fingerprint that changes with the payment it names", () => {
    expect(refundOf(250n)?.naturalKey).toBe(apiRefundKeyOf("rf-1"));
    expect(refundOf(250n)?.naturalKey.startsWith("api:")).toBe(false);
    expect(refundOf(250n)?.original).toBe("api:order-1");
    expect(refundOf(250n, "order-2")?.fingerprint).not.toBe(refundOf(250n)?.fingerprint);
  });

  it("refuses at load an undo rule with legs of its own, or without its transfer kind and stage", () => {
    const undo = { kind: "refund", action: "undo-named-original", transferKind: "refund", transferStage: "refund" };
    const load = (rule: Record<string, unknown>) => () =>
      loadPostingRules({ channel: "http", rules: [rule] });
    const legs = [
      { direction: "D", account: "named", attribute: "a" },
      { direction: "C", account: "named", attribute: "b" },
    ];
    const action = "undo-named-original";
    expect(load({ ...undo, legs })).toThrow(/mirrors its original's legs/);
    expect(load({ kind: "refund", action, transferStage: "refund" })).toThrow(/transferKind/);
    expect(load({ kind: "refund", action, transferKind: "refund" })).toThrow(/transferStage/);
    expect(load({ ...undo, transferKeyBase: "file" })).toThrow(/transferKeyBase/);
    expect(load({ ...undo, transferKeyBase: "intent" })).toThrow(/transferKeyPrefix/);
  });
});
