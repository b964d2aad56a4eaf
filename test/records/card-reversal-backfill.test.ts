import { describe, expect, it } from "vitest";
import { migrationSqlOnTodaysTables } from "../support/database.ts";
import { cardRequest, reversalOf } from "../support/scheme-simulator.ts";
import { identityOf, naturalKeyOf } from "../../src/normalize/from-iso8583.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { balance, testPan, useSchemeScene } from "../gateway/support.ts";

/**
 * Card messages answered before the record core decided them have a stored answer and no dedup
 * mark. Migration 0020 gives each the mark the core would have written (docs/decisions/0039), so
 * that a reversal finds an original answered back then, and a second reversal sees the first.
 * A state from before is made here by removing the marks the endpoint wrote; the migration's SQL
 * then runs again (it only inserts what is missing).
 */
describe("migration 0020: dedup marks for card messages answered before the record core", () => {
  let stan = 950;
  const pan = testPan("476500", 3);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "card-reversal-backfill", pans: [pan], balanceMinor: 50_000n });
  const backfill = migrationSqlOnTodaysTables("0020_card_reversals_through_the_record_core.sql");
  const keyOf = (message: Message) => naturalKeyOf(identityOf(message) ?? (() => { throw new Error("a test message has its identity fields"); })());
  const markOf = async (naturalKey: string) => (await scene.db.pool.query(
    `SELECT fingerprint, channel, kind, state, amount_minor::text, currency, transfer_key,
       original_ref, matched_key FROM record_key WHERE tenant_id = $1 AND natural_key = $2`,
    [scene.issuer.tenantId, naturalKey])).rows;
  const forget = (naturalKey: string) => scene.db.pool.query(
    `DELETE FROM record_key WHERE tenant_id = $1 AND natural_key = $2`,
    [scene.issuer.tenantId, naturalKey]);
  const customer = () => balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);

  it("writes for a stored original the mark the core wrote, so a reversal after the migration releases its hold", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 3_100n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const written = await markOf(keyOf(original));
    await forget(keyOf(original));
    await scene.db.pool.query(backfill);
    expect(await markOf(keyOf(original))).toEqual(written);
    expect((await scene.client.request(reversalOf(original, { stan: nextStan() }))).fields[39]).toBe("00");
    expect(await customer()).toBe(before);
  });

  it("writes for a stored reversal its link to the original, so a different second reversal after the migration is answered 94 and undoes nothing", async () => {
    const before = await customer();
    const original = cardRequest({ pan, amountMinor: 4_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const first = reversalOf(original, { stan: nextStan(), actualMinor: 1_000n });
    expect((await scene.client.request(first)).fields[39]).toBe("00");
    const written = await markOf(keyOf(first));
    await forget(keyOf(first));
    await scene.db.pool.query(backfill);
    expect(await markOf(keyOf(first))).toEqual(written);
    expect((await scene.client.request(reversalOf(original, { stan: nextStan() }))).fields[39]).toBe("94");
    expect(await customer()).toBe(before - 1_000n);
  });
});
