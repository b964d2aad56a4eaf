import { describe, expect, it } from "vitest";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import { cardRequest, reversalOf } from "../support/scheme-simulator.ts";
import { balance, testPan, useSchemeScene } from "../gateway/support.ts";

describe("processing codes at the ISO 8583 scheme endpoint (protocols/iso8583/processing-codes.json)", () => {
  let stan = 300;
  const pan = testPan("476174", 1);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "issuer-pc", pans: [pan], balanceMinor: 100_000n });

  const customer = () => balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
  const scheme = () => balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.scheme("EUR"));
  async function transfersOf(stanValue: unknown): Promise<Array<{ kind: string }>> {
    const { rows } = await scene.db.pool.query<{ kind: string }>(
      "SELECT kind FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE $2 ORDER BY created_at", [scene.issuer.tenantId, `%:${String(stanValue)}:%`]);
    return rows;
  }

  it("holds a cash withdrawal (01) on the card's account like a purchase, as a cash hold", async () => {
    const before = await customer();
    const request = cardRequest({ pan, amountMinor: 2_000n, stan: nextStan(), processingCode: "010000" });
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39], response.fields[3]]).toEqual(["0110", "00", "010000"]);
    expect(await customer()).toBe(before - 2_000n);
    expect(await transfersOf(request.fields[11])).toEqual([{ kind: "card_cash_hold" }]);
  });

  it("credits the card's account from the scheme on a refund (20) financial request", async () => {
    const [customerBefore, schemeBefore] = [await customer(), await scheme()];
    const request = cardRequest({ mti: "0200", pan, amountMinor: 1_500n, stan: nextStan(), processingCode: "200000" });
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39]]).toEqual(["0210", "00"]);
    expect(await customer()).toBe(customerBefore + 1_500n);
    // The clearing account is debit-normal: a debit of it (the scheme owes us) raises its balance.
    expect(await scheme()).toBe(schemeBefore + 1_500n);
    expect(await transfersOf(request.fields[11])).toEqual([{ kind: "card_refund" }]);
  });

  it("takes a reversed refund back from the card's account once, answering the repeat from the stored outcome", async () => {
    const before = await customer();
    const refund = cardRequest({ mti: "0200", pan, amountMinor: 900n, stan: nextStan(), processingCode: "200000" });
    expect((await scene.client.request(refund)).fields[39]).toBe("00");
    const advice = reversalOf(refund, { stan: nextStan(), mti: "0420" });
    const first = await scene.client.request(advice);
    const repeat = await scene.client.request({ ...advice, mti: "0421" });
    expect([first.mti, first.fields[39]]).toEqual(["0430", "00"]);
    expect(repeat).toEqual(first);
    expect(await customer()).toBe(before);
    expect(await transfersOf(refund.fields[11])).toEqual([{ kind: "card_refund" }, { kind: "card_reversal" }]);
  });

  it("takes the customer's side of a reversed refund the customer already spent from the gateway suspense account", async () => {
    const refund = cardRequest({ mti: "0200", pan, amountMinor: 1_000n, stan: nextStan(), processingCode: "200000" });
    expect((await scene.client.request(refund)).fields[39]).toBe("00");
    const spendAll = cardRequest({ mti: "0200", pan, amountMinor: await customer(), stan: nextStan() });
    expect((await scene.client.request(spendAll)).fields[39]).toBe("00");
    const suspenseBefore = await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.suspense("EUR"));
    const reversal = await scene.client.request(reversalOf(refund, { stan: nextStan(), mti: "0420" }));
    expect([reversal.mti, reversal.fields[39]]).toEqual(["0430", "00"]);
    expect(await customer()).toBe(0n);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.suspense("EUR"))).toBe(suspenseBefore - 1_000n);
    const stored = await scene.db.pool.query("SELECT outcome FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key LIKE $2", [scene.issuer.tenantId, `%:${String(refund.fields[11])}:%`]);
    expect(stored.rows).toEqual([{ outcome: "reversed_to_suspense" }]);
    // Fund the account again for the tests that follow.
    const refill = cardRequest({ mti: "0200", pan, amountMinor: 50_000n, stan: nextStan(), processingCode: "200000" });
    expect((await scene.client.request(refill)).fields[39]).toBe("00");
  });

  it("approves a refund (20) authorization and moves no money", async () => {
    const before = await customer();
    const request = cardRequest({ pan, amountMinor: 700n, stan: nextStan(), processingCode: "200000" });
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39]]).toEqual(["0110", "00"]);
    expect(await customer()).toBe(before);
    expect(await transfersOf(request.fields[11])).toEqual([]);
    const stored = await scene.db.pool.query("SELECT outcome, effect_key FROM iso8583_inbound WHERE tenant_id = $1 AND natural_key LIKE $2", [scene.issuer.tenantId, `%:${String(request.fields[11])}:%`]);
    expect(stored.rows).toEqual([{ outcome: "approved", effect_key: null }]);
  });

  it("answers a balance inquiry (31) without an amount with the available balance in field 54, posts nothing, and answers its repeat from the stored response", async () => {
    const before = await customer();
    const { 4: _amount, ...withoutAmount } = cardRequest({ pan, amountMinor: 0n, stan: nextStan(), processingCode: "312000" }).fields;
    const request = { mti: "0100", fields: withoutAmount };
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39]]).toEqual(["0110", "00"]);
    expect(response.fields[54]).toBe(`2002978C${before.toString().padStart(12, "0")}`);
    expect(await customer()).toBe(before);
    expect(await transfersOf(request.fields[11])).toEqual([]);
    // A hold in between changes the balance; the repeat still answers what was answered.
    expect((await scene.client.request(cardRequest({ pan, amountMinor: 100n, stan: nextStan() }))).fields[39]).toBe("00");
    expect(await scene.client.request({ ...request, mti: "0101" })).toEqual(response);
  });

  it("answers 12 to a processing code this issuer does not serve (40, a transfer) and posts nothing", async () => {
    const before = await customer();
    const request = cardRequest({ pan, amountMinor: 500n, stan: nextStan(), processingCode: "400010" });
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39]]).toEqual(["0110", "12"]);
    expect(await customer()).toBe(before);
    expect(await transfersOf(request.fields[11])).toEqual([]);
  });

  it("answers 12 to a served processing code in a message kind it has no rule for (a balance inquiry as a 0200)", async () => {
    const before = await customer();
    const request = cardRequest({ mti: "0200", pan, amountMinor: 0n, stan: nextStan(), processingCode: "310000" });
    const response = await scene.client.request(request);
    expect([response.mti, response.fields[39]]).toEqual(["0210", "12"]);
    expect(response.fields[54]).toBeUndefined();
    expect(await customer()).toBe(before);
  });

  it("answers 94 to a refund under the natural key of an earlier purchase with the same amount: another transaction type is another message", async () => {
    const purchase = cardRequest({ mti: "0200", pan, amountMinor: 400n, stan: nextStan() });
    expect((await scene.client.request(purchase)).fields[39]).toBe("00");
    const before = await customer();
    const refund = await scene.client.request({ ...purchase, fields: { ...purchase.fields, 3: "200000" } });
    expect(refund.fields[39]).toBe("94");
    expect(await customer()).toBe(before);
  });
});
