import { describe, expect, it } from "vitest";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import { cardRequest, reversalOf } from "../support/scheme-simulator.ts";
import { balance, testPan, useSchemeScene } from "../gateway/support.ts";

describe("partial reversals through field 95 (replacement amounts), docs/decisions/0028", () => {
  let stan = 500;
  const pan = testPan("476175", 1);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "issuer-partial", pans: [pan], balanceMinor: 100_000n });

  const customer = () => balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
  async function undoTransfers(stanValue: unknown): Promise<Array<{ kind: string; transfer_key: string; amount_minor: string }>> {
    const { rows } = await scene.db.pool.query<{ kind: string; transfer_key: string; amount_minor: string }>(
      `SELECT t.kind, t.transfer_key, e.amount_minor::text FROM transfer t JOIN ledger_entry e USING (tenant_id, transfer_key)
        WHERE t.tenant_id = $1 AND t.transfer_key LIKE $2 AND t.kind IN ('card_hold_release', 'card_reversal') AND e.direction = 'C'`,
      [scene.issuer.tenantId, `%:${String(stanValue)}:%`]);
    return rows;
  }
  async function dedupReasons(stanValue: unknown): Promise<string[]> {
    const { rows } = await scene.db.pool.query<{ reason: string }>("SELECT reason FROM dedup_event WHERE channel = 'iso8583' AND dedup_key LIKE $1 ORDER BY created_at", [`%:${String(stanValue)}:%`]);
    return rows.map((r) => r.reason);
  }

  it("releases only the difference between the held amount and field 95's actual amount, once, under a key derived from the original's", async () => {
    const before = await customer();
    const holdsBefore = await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.holds("EUR"));
    const original = cardRequest({ pan, amountMinor: 10_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const partial = reversalOf(original, { stan: nextStan(), actualMinor: 6_000n });
    const first = await scene.client.request(partial);
    expect([first.mti, first.fields[39]]).toEqual(["0410", "00"]);
    for (let i = 0; i < 2; i++) expect(await scene.client.request({ ...partial, mti: "0401" })).toEqual(first);
    expect(await customer()).toBe(before - 6_000n);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.holds("EUR"))).toBe(holdsBefore + 6_000n);
    const undone = await undoTransfers(original.fields[11]);
    expect(undone).toHaveLength(1);
    expect(undone[0]?.kind).toBe("card_hold_release");
    expect(undone[0]?.amount_minor).toBe("4000");
    expect(undone[0]?.transfer_key).toMatch(/^iso8583:010:.*:release$/);
    const stored = await scene.db.pool.query("SELECT outcome, actual_minor::text, undone_minor::text FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key LIKE $2", [scene.issuer.tenantId, `%:${String(original.fields[11])}:%`]);
    expect(stored.rows).toEqual([{ outcome: "released", actual_minor: "6000", undone_minor: "4000" }]);
    expect(await dedupReasons(original.fields[11])).toEqual(["repeat", "repeat"]);
  });

  it("reverses only the difference of a posted 0200 on a partial 0420 advice", async () => {
    const before = await customer();
    const financial = cardRequest({ mti: "0200", pan, amountMinor: 5_000n, stan: nextStan() });
    expect((await scene.client.request(financial)).fields[39]).toBe("00");
    const advice = await scene.client.request(reversalOf(financial, { stan: nextStan(), mti: "0420", actualMinor: 3_500n }));
    expect([advice.mti, advice.fields[39]]).toEqual(["0430", "00"]);
    expect(await customer()).toBe(before - 3_500n);
    expect((await undoTransfers(financial.fields[11])).map((t) => [t.kind, t.amount_minor])).toEqual([["card_reversal", "1500"]]);
  });

  it("answers 94 to a second partial reversal of one original with another actual amount, and undoes nothing more", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 8_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    expect((await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 5_000n }))).fields[39]).toBe("00");
    const second = await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 2_000n }));
    expect([second.mti, second.fields[39]]).toEqual(["0410", "94"]);
    expect(await customer()).toBe(before - 5_000n);
    expect((await undoTransfers(original.fields[11])).map((t) => t.amount_minor)).toEqual(["3000"]);
    expect(await dedupReasons(original.fields[11])).toEqual(["duplicate_transmission"]);
  });

  it("answers 94 to a full reversal after a partial one of the same original, and undoes nothing more", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 3_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    expect((await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 1_000n }))).fields[39]).toBe("00");
    expect((await scene.client.request(reversalOf(original, { stan: nextStan() }))).fields[39]).toBe("94");
    expect(await customer()).toBe(before - 1_000n);
  });

  it("treats an all-zero field 95 as a full reversal", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 1_200n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const reversal = reversalOf(original, { stan: nextStan() });
    const response = await scene.client.request({ ...reversal, fields: { ...reversal.fields, 95: "0".repeat(24) + "C00000000C00000000" } });
    expect(response.fields[39]).toBe("00");
    expect(await customer()).toBe(before);
  });

  it("acknowledges an actual amount equal to the original's and undoes nothing", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 2_500n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    expect((await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 2_500n }))).fields[39]).toBe("00");
    expect(await customer()).toBe(before - 2_500n);
    expect(await undoTransfers(original.fields[11])).toEqual([]);
    const stored = await scene.db.pool.query("SELECT outcome, undone_minor::text FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key LIKE $2", [scene.issuer.tenantId, `%:${String(original.fields[11])}:%`]);
    expect(stored.rows).toEqual([{ outcome: "nothing_to_reverse", undone_minor: "0" }]);
  });

  it("answers 13 to an actual amount above the original's, records nothing, and still applies a valid reversal afterwards", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 1_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    expect((await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 1_001n }))).fields[39]).toBe("13");
    expect(await customer()).toBe(before - 1_000n);
    expect((await scene.client.request(reversalOf(original, { stan: nextStan(), actualMinor: 400n }))).fields[39]).toBe("00");
    expect(await customer()).toBe(before - 400n);
  });

  it("answers 30 to a field 95 that is not four replacement amounts, and changes nothing", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 600n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const reversal = reversalOf(original, { stan: nextStan() });
    const response = await scene.client.request({ ...reversal, fields: { ...reversal.fields, 95: "X".repeat(42) } });
    expect([response.mti, response.fields[39]]).toEqual(["0410", "30"]);
    expect(await customer()).toBe(before - 600n);
  });
});
