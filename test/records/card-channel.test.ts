import { describe, expect, it } from "vitest";
import { addCard } from "../../src/cards/cards.ts";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { processingRuleOf } from "../../src/cards/processing-codes.ts";
import { cardRequest } from "../support/scheme-simulator.ts";
import { cardOriginalRecord, identityOf, type MessageKind } from "../../src/normalize/from-iso8583.ts";
import type { CanonicalRecord } from "../../src/normalize/canonical-record.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { recordHistory } from "../../src/records/record-history.ts";
import { balance, testPan, useSchemeScene } from "../gateway/support.ts";

/**
 * The card channel goes through the record core (docs/decisions/0032): an ISO 8583 original is a
 * canonical record (src/normalize/from-iso8583.ts) whose key claim, fingerprint comparison,
 * posting and dedup record are the core's, over a real socket to the scheme endpoint.
 */
describe("ISO 8583 originals through the record core", () => {
  let stan = 700;
  const pan = testPan("476500", 1);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "card-core", pans: [pan], balanceMinor: 100_000n });

  /** The canonical record the normalizer makes of `message` (an original in EUR on the issuer's card). */
  function recordOf(message: Message, kind: MessageKind, cardPan = pan): CanonicalRecord {
    const identity = identityOf(message);
    if (identity === undefined) throw new Error("a test original has its identity fields");
    const item = cardOriginalRecord({
      tenantId: scene.issuer.tenantId, mti: message.mti, messageKind: kind, identity, retrievalReferenceNumber: String(message.fields[37]),
      cardHash: scene.keys.cardHash(scene.issuer.tenantId, cardPan), amountMinor: BigInt(String(message.fields[4])), currency: "EUR",
      transactionType: String(message.fields[3]).slice(0, 2), rule: processingRuleOf(message, kind),
      account: { accountId: scene.issuer.accountId, currency: "EUR" },
      gatewayAccounts: { holds: gatewayAccounts.holds("EUR"), scheme: gatewayAccounts.scheme("EUR"), suspense: gatewayAccounts.suspense("EUR") },
      position: "test", connection: "test", valueDate: "2026-12-03",
    });
    if (item.record === undefined) throw new Error(`the normalizer rejected the test original: ${item.rejection?.code ?? ""}`);
    return item.record;
  }

  const keyRows = async (naturalKey: string) => (await scene.db.pool.query<{ natural_key: string; fingerprint: string; channel: string; kind: string; state: string; transfer_key: string | null; file_id: string | null }>(
    `SELECT natural_key, fingerprint, channel, kind, state, transfer_key, file_id FROM record_key
       WHERE tenant_id = $1 AND natural_key = $2`, [scene.issuer.tenantId, naturalKey])).rows;
  const transfersOf = async (naturalKey: string) => (await scene.db.pool.query<{ transfer_key: string; kind: string }>(
    "SELECT transfer_key, kind FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE $2 ORDER BY transfer_key", [scene.issuer.tenantId, `${naturalKey}:%`])).rows;
  const dedupEvents = async (naturalKey: string) => (await scene.db.pool.query<{ channel: string; reason: string; original_ref: string | null; position: string | null }>(
    "SELECT channel, reason, original_ref, position FROM dedup_event WHERE tenant_id = $1 AND dedup_key = $2 ORDER BY created_at", [scene.issuer.tenantId, naturalKey])).rows;

  it("posts a 0200 and its 0201 repeat once: one transfer, one dedup mark with the normalizer's key and fingerprint, and a dedup record of the repeat", async () => {
    const financial = cardRequest({ mti: "0200", pan, amountMinor: 800n, stan: nextStan() });
    const record = recordOf(financial, "financial");
    const first = await scene.client.request(financial);
    const repeat = await scene.client.request({ ...financial, mti: "0201" });
    expect([first.mti, first.fields[39]]).toEqual(["0210", "00"]);
    expect(repeat).toEqual(first);
    expect(await transfersOf(record.naturalKey)).toEqual([{ transfer_key: `${record.naturalKey}:posting`, kind: "card_posting" }]);
    expect(await keyRows(record.naturalKey)).toEqual([{
      natural_key: record.naturalKey, fingerprint: record.fingerprint, channel: "iso8583", kind: "financial", state: "applied",
      transfer_key: `${record.naturalKey}:posting`, file_id: null,
    }]);
    expect(await dedupEvents(record.naturalKey)).toEqual([
      { channel: "iso8583", reason: "duplicate", original_ref: `${record.naturalKey}:posting`, position: `mti=0201 stan=${String(financial.fields[11])} rrn=${String(financial.fields[37])}` },
    ]);
  });

  it("shows a card key's history like any record's: the 0200 applied, its 0201 repeat a duplicate, one transfer", async () => {
    const financial = cardRequest({ mti: "0200", pan, amountMinor: 650n, stan: nextStan() });
    const naturalKey = recordOf(financial, "financial").naturalKey;
    await scene.client.request(financial);
    await scene.client.request({ ...financial, mti: "0201" });
    const history = await recordHistory(scene.db.pool, scene.issuer.tenantId, naturalKey);
    expect(history?.events.map((e) => (e.type === "arrival" ? [e.channel, e.outcome, /mti=\d{4}/.exec(e.via)?.[0]] : [e.type]))).toEqual([
      ["iso8583", "applied", "mti=0200"],
      ["iso8583", "duplicate", "mti=0201"],
    ]);
    expect(history?.transfers.map((t) => [t.transfer_key, t.kind])).toEqual([[`${naturalKey}:posting`, "card_posting"]]);
  });

  it("answers 94 to a 0200 under a known key with another amount, and posts nothing", async () => {
    const financial = cardRequest({ mti: "0200", pan, amountMinor: 500n, stan: nextStan() });
    const record = recordOf(financial, "financial");
    expect((await scene.client.request(financial)).fields[39]).toBe("00");
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const altered = await scene.client.request({ ...financial, fields: { ...financial.fields, 4: "000000000900" } });
    expect([altered.mti, altered.fields[39]]).toEqual(["0210", "94"]);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    expect(await transfersOf(record.naturalKey)).toHaveLength(1);
    expect((await keyRows(record.naturalKey)).map((k) => k.fingerprint)).toEqual([record.fingerprint]);
    expect((await dedupEvents(record.naturalKey)).map((e) => e.reason)).toEqual(["conflict"]);
  });

  it("claims no key for a card nobody registered: declined 14, the answer stored", async () => {
    const unknown = cardRequest({ pan: testPan("476500", 99), amountMinor: 100n, stan: nextStan() });
    const naturalKey = recordOf(unknown, "authorization", testPan("476500", 99)).naturalKey;
    expect((await scene.client.request(unknown)).fields[39]).toBe("14");
    expect(await keyRows(naturalKey)).toEqual([]);
    const stored = await scene.db.pool.query("SELECT outcome, response_code FROM iso8583_inbound WHERE tenant_id = $1 AND natural_key = $2", [scene.issuer.tenantId, naturalKey]);
    expect(stored.rows).toEqual([{ outcome: "declined", response_code: "14" }]);
  });

  it("answers a repeat of a 14 decline from its stored answer, even after the card was registered, and holds nothing", async () => {
    const latePan = testPan("476500", 98);
    const unknown = cardRequest({ pan: latePan, amountMinor: 100n, stan: nextStan() });
    const naturalKey = recordOf(unknown, "authorization", latePan).naturalKey;
    const declined = await scene.client.request(unknown);
    expect(declined.fields[39]).toBe("14");
    await withTransaction(scene.db.pool, async (tx) => {
      const added = await addCard(tx, scene.keys, { tenantId: scene.issuer.tenantId, pan: latePan, accountId: scene.issuer.accountId });
      if (!added.ok) throw new Error(added.error.message);
    });
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    expect(await scene.client.request({ ...unknown, mti: "0101" })).toEqual(declined);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    expect(await transfersOf(naturalKey)).toEqual([]);
    expect((await dedupEvents(naturalKey)).map((e) => e.reason)).toEqual(["duplicate"]);
  });

  it("answers a message under a new key that carries a known RRN from the stored response, through the RRN link, with one hold", async () => {
    const authorization = cardRequest({ pan, amountMinor: 300n, stan: nextStan(), rrn: "334455667788" });
    const first = await scene.client.request(authorization);
    const relinked = await scene.client.request({ ...authorization, fields: { ...authorization.fields, 11: String(nextStan()).padStart(6, "0") } });
    expect(first.fields[39]).toBe("00");
    expect(relinked.fields[38]).toBe(first.fields[38]);
    const naturalKey = recordOf(authorization, "authorization").naturalKey;
    expect(await transfersOf(naturalKey)).toEqual([{ transfer_key: `${naturalKey}:hold`, kind: "card_hold" }]);
    expect((await dedupEvents(naturalKey)).map((e) => e.reason)).toEqual(["duplicate_by_rrn"]);
    const keys = await scene.db.pool.query(
      `SELECT 1 FROM record_key WHERE tenant_id = $1 AND natural_key LIKE 'iso8583:010:%'
         AND natural_key LIKE $2`,
      [scene.issuer.tenantId, `%:${String(relinked.fields[11])}:%`]);
    expect(keys.rowCount).toBe(0);
  });

  it("applies a 0220 advice the account cannot cover as advised, under its key, the debit taken from suspense", async () => {
    const available = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const suspenseBefore = await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.suspense("EUR"));
    const advice = cardRequest({ mti: "0220", pan, amountMinor: available + 1n, stan: nextStan() });
    const record = recordOf(advice, "financialAdvice");
    expect((await scene.client.request(advice)).fields[39]).toBe("00");
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(available);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.suspense("EUR"))).toBe(suspenseBefore - available - 1n);
    expect((await keyRows(record.naturalKey)).map((k) => [k.kind, k.state, k.transfer_key])).toEqual([["financial_advice", "applied", `${record.naturalKey}:posting`]]);
    const stored = await scene.db.pool.query("SELECT outcome, effect_key FROM iso8583_inbound WHERE tenant_id = $1 AND natural_key = $2", [scene.issuer.tenantId, record.naturalKey]);
    expect(stored.rows).toEqual([{ outcome: "posted_to_suspense", effect_key: `${record.naturalKey}:posting` }]);
  });
});
