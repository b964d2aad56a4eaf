import { describe, expect, it } from "vitest";
import { cardRequest, reversalOf } from "../support/scheme-simulator.ts";
import { identityOf, naturalKeyOf, originalIdentityOf, reversalFingerprintOf } from "../../src/normalize/from-iso8583.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { recordHistory } from "../../src/records/record-history.ts";
import { balance, testPan, useSchemeScene } from "../gateway/support.ts";

/**
 * ISO 8583 reversals go through the record core (docs/decisions/0039): a 0400/0420 is a canonical
 * record whose key claim, match with its original, at-most-once and undo posting are the core's,
 * over a real socket to the scheme endpoint.
 */
describe("ISO 8583 reversals through the record core", () => {
  let stan = 900;
  const pan = testPan("476500", 2);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "card-reversal-core", pans: [pan], balanceMinor: 100_000n });

  const keyOf = (message: Message) => naturalKeyOf(identityOf(message) ?? (() => { throw new Error("a test message has its identity fields"); })());
  const originalKeyOf = (reversal: Message) => naturalKeyOf(originalIdentityOf(reversal) ?? (() => { throw new Error("a test reversal has field 90"); })());
  const keyRows = async (naturalKey: string) => (await scene.db.pool.query<{ fingerprint: string; kind: string; state: string; amount_minor: string; transfer_key: string | null; original_ref: string | null; matched_key: string | null }>(
    `SELECT fingerprint, kind, state, amount_minor::text, transfer_key, original_ref, matched_key
       FROM record_key WHERE tenant_id = $1 AND natural_key = $2`,
    [scene.issuer.tenantId, naturalKey])).rows;
  const undoTransfers = async (originalKey: string) => (await scene.db.pool.query<{ transfer_key: string; kind: string; amount_minor: string }>(
    `SELECT t.transfer_key, t.kind, max(e.amount_minor)::text AS amount_minor FROM transfer t JOIN ledger_entry e ON e.tenant_id = t.tenant_id AND e.transfer_key = t.transfer_key
      WHERE t.tenant_id = $1 AND t.transfer_key IN ($2 || ':release', $2 || ':reversal') GROUP BY t.transfer_key, t.kind`, [scene.issuer.tenantId, originalKey])).rows;
  const fingerprintOf = (reversal: Message, actualMinor?: bigint) => reversalFingerprintOf({
    cardHash: scene.keys.cardHash(scene.issuer.tenantId, pan), amountMinor: BigInt(String(reversal.fields[4])), currencyField: String(reversal.fields[49]), actualMinor,
  });
  const customer = () => balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);

  it("decides a 0400 in the core: its key claimed with its fingerprint, one release, and the original's history lists both arrivals and both transfers", async () => {
    const original = cardRequest({ pan, amountMinor: 2_200n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const reversal = reversalOf(original, { stan: nextStan() });
    expect((await scene.client.request(reversal)).fields[39]).toBe("00");
    const originalKey = keyOf(original);
    expect(await keyRows(keyOf(reversal))).toEqual([{
      fingerprint: fingerprintOf(reversal), kind: "reversal", state: "applied", amount_minor: "2200",
      transfer_key: `${originalKey}:release`, original_ref: originalKey, matched_key: originalKey,
    }]);
    expect(await undoTransfers(originalKey)).toEqual([{ transfer_key: `${originalKey}:release`, kind: "card_hold_release", amount_minor: "2200" }]);
    const history = await recordHistory(scene.db.pool, scene.issuer.tenantId, originalKey);
    expect(history?.events.map((e) => (e.type === "arrival" ? [e.natural_key, e.outcome, e.transfer_key] : [e.type]))).toEqual([
      [originalKey, "applied", `${originalKey}:hold`],
      [keyOf(reversal), "applied", `${originalKey}:release`],
    ]);
    expect(history?.transfers.map((t) => [t.transfer_key, t.kind])).toEqual([[`${originalKey}:hold`, "card_hold"], [`${originalKey}:release`, "card_hold_release"]]);
  });

  it("answers a 0420 repeat of a 0400 with 0430 and the stored code, and posts nothing more (regression: the 0410 of the stored answer was replayed to a 0420)", async () => {
    const before = await customer();
    const original = cardRequest({ mti: "0200", pan, amountMinor: 1_300n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const reversal = reversalOf(original, { stan: nextStan() });
    expect((await scene.client.request(reversal)).fields[39]).toBe("00");
    const advice = reversalOf(original, { stan: nextStan(), mti: "0420" });
    const answered = await scene.client.request(advice);
    expect([answered.mti, answered.fields[39], answered.fields[11]]).toEqual(["0430", "00", advice.fields[11]]);
    expect(await customer()).toBe(before);
    expect((await undoTransfers(originalKeyOf(reversal))).map((t) => [t.kind, t.amount_minor])).toEqual([["card_reversal", "1300"]]);
    expect(await keyRows(keyOf(advice))).toEqual([{
      fingerprint: fingerprintOf(advice), kind: "reversal", state: "applied", amount_minor: "1300", transfer_key: null, original_ref: originalKeyOf(advice), matched_key: keyOf(reversal),
    }]);
  });

  it("undoes a partial reversal's difference once: the key claims the original's amount less field 95's, and a second, different one is refused with its key", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 9_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const partial = reversalOf(original, { stan: nextStan(), actualMinor: 7_000n });
    expect((await scene.client.request(partial)).fields[39]).toBe("00");
    const other = reversalOf(original, { stan: nextStan(), actualMinor: 1_000n });
    expect((await scene.client.request(other)).fields[39]).toBe("94");
    expect(await customer()).toBe(before - 7_000n);
    const originalKey = keyOf(original);
    expect((await undoTransfers(originalKey)).map((t) => [t.transfer_key, t.amount_minor])).toEqual([[`${originalKey}:release`, "2000"]]);
    expect((await keyRows(keyOf(partial))).map((k) => [k.state, k.amount_minor, k.fingerprint])).toEqual([["applied", "2000", fingerprintOf(partial, 7_000n)]]);
    expect((await keyRows(keyOf(other))).map((k) => [k.state, k.transfer_key, k.matched_key])).toEqual([["refused", null, keyOf(partial)]]);
  });

  it("records a 0400 of an unknown original as an orphan key that moves nothing, and answers the late original 05 without holding", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 800n, stan: nextStan() });
    const reversal = reversalOf(original, { stan: nextStan() });
    expect((await scene.client.request(reversal)).fields[39]).toBe("00");
    expect((await keyRows(keyOf(reversal))).map((k) => [k.state, k.transfer_key, k.original_ref])).toEqual([["orphan", null, keyOf(original)]]);
    expect((await scene.client.request(original)).fields[39]).toBe("05");
    expect(await customer()).toBe(before);
    expect(await undoTransfers(keyOf(original))).toEqual([]);
  });
});
