import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import { FramedSocket } from "../../src/gateway/framed-socket.ts";
import { cardRequest, networkRequest, reversalOf } from "../support/scheme-simulator.ts";
import { iso8583MessageDuration } from "../../src/observability/metrics-gateway.ts";
import { iso87AsciiDictionary, pack, unpackTolerant, type Message } from "../../src/protocols/iso8583/index.ts";
import { balance, codec, testPan, useSchemeScene } from "./support.ts";

describe("the ISO 8583 scheme endpoint", () => {
  let stan = 100;
  const pan = testPan("476173", 1);
  const nextStan = () => ++stan;
  const scene = useSchemeScene({ name: "issuer-a", pans: [pan], balanceMinor: 100_000n });

  async function dedupReasons(naturalKeyPart: string): Promise<string[]> {
    const { rows } = await scene.db.pool.query<{ reason: string }>("SELECT reason FROM dedup_event WHERE channel = 'iso8583' AND dedup_key LIKE $1 ORDER BY created_at", [`%${naturalKeyPart}%`]);
    return rows.map((r) => r.reason);
  }

  it("answers sign-on, echo and sign-off with 0810 and code 00", async () => {
    // Sign-off first and sign-on last: the shared client stays signed on for the tests below.
    for (const code of ["002", "301", "001"] as const) {
      const response = await scene.client.request(networkRequest(code, nextStan()));
      expect(response.mti).toBe("0810");
      expect(response.fields[39]).toBe("00");
      expect(response.fields[70]).toBe(code);
    }
  });

  it("holds the amount on an approved 0100 and answers a 0101 repeat with the identical stored response, holding once", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const request = cardRequest({ pan, amountMinor: 1_250n, stan: nextStan() });
    const first = await scene.client.request(request);
    const repeat = await scene.client.request({ ...request, mti: "0101" });
    expect(first.mti).toBe("0110");
    expect(first.fields[39]).toBe("00");
    expect(first.fields[38]).toMatch(/^[0-9A-F]{6}$/);
    expect(repeat).toEqual(first);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before - 1_250n);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.holds("EUR"))).toBeGreaterThanOrEqual(1_250n);
    expect(await dedupReasons(`:${request.fields[11]}:`)).toEqual(["duplicate"]);
  });

  it("answers a retransmitted 0100 from the stored response without a second hold", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const request = cardRequest({ pan, amountMinor: 300n, stan: nextStan() });
    const first = await scene.client.request(request);
    const again = await scene.client.request(request);
    expect(again).toEqual(first);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before - 300n);
    expect(await dedupReasons(`:${request.fields[11]}:`)).toEqual(["duplicate"]);
  });

  it("releases the hold once on a 0400 and acknowledges 0401 repeats without a second release", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const original = cardRequest({ pan, amountMinor: 2_000n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before - 2_000n);
    const reversal = reversalOf(original, { stan: nextStan() });
    const acknowledged = await scene.client.request(reversal);
    expect(acknowledged.mti).toBe("0410");
    expect(acknowledged.fields[39]).toBe("00");
    expect(acknowledged.fields[90]).toEqual(reversal.fields[90]);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    for (let i = 0; i < 2; i++) expect(await scene.client.request({ ...reversal, mti: "0401" })).toEqual(acknowledged);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    const releases = await scene.db.pool.query("SELECT 1 FROM transfer WHERE tenant_id = $1 AND kind = 'card_hold_release' AND transfer_key LIKE $2", [scene.issuer.tenantId, `%:${original.fields[11]}:%`]);
    expect(releases.rowCount).toBe(1);
    expect(await dedupReasons(`:${original.fields[11]}:`)).toEqual(["repeat", "repeat"]);
  });

  it("answers a second 0400 of one original, sent under a new STAN, with its own STAN and no second release (regression: seeded simulation, seed 3)", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const original = cardRequest({ pan, amountMinor: 1_500n, stan: nextStan() });
    expect((await scene.client.request(original)).fields[39]).toBe("00");
    const first = await scene.client.request(reversalOf(original, { stan: nextStan() }));
    const secondRequest = reversalOf(original, { stan: nextStan() });
    const second = await scene.client.request(secondRequest);
    expect(second.fields[11]).toBe(secondRequest.fields[11]);
    expect(second.fields[11]).not.toBe(first.fields[11]);
    expect(second.fields[39]).toBe(first.fields[39]);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
  });

  it("acknowledges a 0400 whose original was never seen, records it as an orphan, and declines the late original without holding", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const original = cardRequest({ pan, amountMinor: 700n, stan: nextStan() });
    const reversal = await scene.client.request(reversalOf(original, { stan: nextStan() }));
    expect(reversal.fields[39]).toBe("00");
    const orphan = await scene.db.pool.query<{ outcome: string }>("SELECT outcome FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key LIKE $2", [scene.issuer.tenantId, `%:${original.fields[11]}:%`]);
    expect(orphan.rows).toEqual([{ outcome: "orphan" }]);

    const late = await scene.client.request(original);
    expect(late.fields[39]).toBe("05");
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    expect(await dedupReasons(`:${original.fields[11]}:`)).toEqual(["orphan", "original_after_reversal"]);
  });

  it("answers 94 to the same natural key with another amount and changes nothing", async () => {
    const request = cardRequest({ pan, amountMinor: 500n, stan: nextStan() });
    expect((await scene.client.request(request)).fields[39]).toBe("00");
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const altered = await scene.client.request({ ...request, mti: "0101", fields: { ...request.fields, 4: "000000000900" } });
    expect(altered.fields[39]).toBe("94");
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    expect(await dedupReasons(`:${request.fields[11]}:`)).toEqual(["conflict"]);
  });

  it("answers 94 to the same natural key with another card of the same issuer", async () => {
    const otherPan = testPan("476173", 2);
    const request = cardRequest({ pan, amountMinor: 100n, stan: nextStan() });
    expect((await scene.client.request(request)).fields[39]).toBe("00");
    const altered = await scene.client.request({ ...request, fields: { ...request.fields, 2: otherPan } });
    expect(altered.fields[39]).toBe("94");
  });

  it("declines an unknown card of a known issuer with 14 and an unknown issuer with 15", async () => {
    const unknownCard = await scene.client.request(cardRequest({ pan: testPan("476173", 99), amountMinor: 100n, stan: nextStan() }));
    const unknownIssuer = await scene.client.request(cardRequest({ pan: testPan("999999", 1), amountMinor: 100n, stan: nextStan() }));
    expect([unknownCard.fields[39], unknownIssuer.fields[39]]).toEqual(["14", "15"]);
  });

  it("declines with 51 when the available balance (balance net of holds) does not cover the amount", async () => {
    const available = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const response = await scene.client.request(cardRequest({ pan, amountMinor: available + 1n, stan: nextStan() }));
    expect(response.fields[39]).toBe("51");
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(available);
  });

  it("posts a 0200 financial request to the scheme clearing account and reverses it once on a 0420", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const financial = cardRequest({ mti: "0200", pan, amountMinor: 800n, stan: nextStan() });
    const response = await scene.client.request(financial);
    expect([response.mti, response.fields[39]]).toEqual(["0210", "00"]);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before - 800n);
    const advice = reversalOf(financial, { stan: nextStan(), mti: "0420" });
    const first = await scene.client.request(advice);
    const repeat = await scene.client.request({ ...advice, mti: "0421" });
    expect([first.mti, first.fields[39]]).toEqual(["0430", "00"]);
    expect(repeat).toEqual(first);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
  });

  it("applies a 0120 advice as advised, into suspense when the customer account cannot cover it", async () => {
    const before = await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId);
    const advice = await scene.client.request(cardRequest({ mti: "0120", pan, amountMinor: before + 10n, stan: nextStan() }));
    expect([advice.mti, advice.fields[39]]).toEqual(["0130", "00"]);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, scene.issuer.accountId)).toBe(before);
    expect(await balance(scene.db.pool, scene.issuer.tenantId, gatewayAccounts.suspense("EUR"))).toBe(-(before + 10n));
  });

  it("answers a malformed message with a format error (30) and keeps the connection open", async () => {
    scene.client.sendFrameBody(Buffer.from("0100ZZZZ", "latin1"));
    const answer = await scene.client.nextUnmatched();
    expect([answer.mti, answer.fields[39]]).toEqual(["0110", "30"]);
    const after = await scene.client.request(networkRequest("301", nextStan()));
    expect(after.fields[39]).toBe("00");
  });

  it("stays strict: a 0100 whose fee (field 28) lacks its C/D sign is answered with a format error (30), as tolerant trace reading would not", async () => {
    const request = cardRequest({ pan, amountMinor: 100n, stan: nextStan() });
    const packed = pack({ ...request, fields: { ...request.fields, 28: "C00000100" } }, iso87AsciiDictionary);
    if (!packed.ok) expect.fail(packed.error.message);
    const unsigned = Buffer.from(packed.value.toString("latin1").replace("C00000100", "000000100"), "latin1");
    expect(unpackTolerant(unsigned, iso87AsciiDictionary).ok).toBe(true);
    scene.client.sendFrameBody(unsigned);
    const answer = await scene.client.nextUnmatched();
    expect([answer.mti, answer.fields[39]]).toEqual(["0110", "30"]);
  });

  it("answers an unsupported request MTI with a format error (30)", async () => {
    const response = await scene.client.request({ mti: "0300", fields: { 7: "1201120000", 11: String(nextStan()).padStart(6, "0") } });
    expect([response.mti, response.fields[39]]).toEqual(["0310", "30"]);
  });

  it("answers MTI 9999 (readable, invalid) with a format error (30) even before sign-on, as the README promises, and leaves a stray response unanswered", async () => {
    // A fresh connection, not signed on: what an acquirer or an attacker sees first.
    const socket = connect({ host: "127.0.0.1", port: scene.endpoint.port });
    await new Promise((resolve) => socket.once("connect", resolve));
    const answers: Message[] = [];
    const echoed = new Promise<void>((resolve) => {
      const framed = new FramedSocket(socket, codec, {
        message(message) {
          answers.push(message);
          if (message.mti === "0810") resolve();
        },
        malformed: () => undefined,
        streamBroken: () => undefined,
      });
      const stan = (n: number) => String(n).padStart(6, "0");
      framed.send({ mti: "9999", fields: { 7: "1201120000", 11: stan(nextStan()) } });
      framed.send({ mti: "0110", fields: { 7: "1201120000", 11: stan(nextStan()), 39: "00" } });
      // The echo is the fence: answered after the messages before it were taken.
      framed.send(networkRequest("301", nextStan()));
    });
    await echoed;
    socket.destroy();
    expect(answers.map((m) => `${m.mti}/${String(m.fields[39])}`)).toEqual(["9910/30", "0810/00"]);
  });

  it("answers a 0100 that lacks its natural key fields with a format error (30)", async () => {
    const request = cardRequest({ pan, amountMinor: 100n, stan: nextStan() });
    const { 32: _acquirer, ...fields } = request.fields;
    const response = await scene.client.request({ mti: "0100", fields });
    expect(response.fields[39]).toBe("30");
  });

  it("observes each answered message's latency by message class", async () => {
    const countOf = async (messageClass: string) => (await iso8583MessageDuration.get()).values
      .find((v) => v.metricName === "clearline_iso8583_message_duration_seconds_count" && v.labels.direction === "inbound" && v.labels.message_class === messageClass && v.labels.outcome === "answered")?.value ?? 0;
    const [authorizations, network] = [await countOf("authorization"), await countOf("network_management")];
    await scene.client.request(cardRequest({ pan, amountMinor: 100n, stan: nextStan() }));
    await scene.client.request(networkRequest("301", nextStan()));
    expect(await countOf("authorization")).toBe(authorizations + 1);
    expect(await countOf("network_management")).toBe(network + 1);
  });
});
