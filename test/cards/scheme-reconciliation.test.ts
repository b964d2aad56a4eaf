import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import type { InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import { cardRequest, reversalOf, transmissionNow, type SchemeClient } from "../support/scheme-simulator.ts";
import type { Message } from "../../src/protocols/iso8583/index.ts";
import { correctDifference } from "../../src/recon/differences.ts";
import { showRun } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balance, connectClient, givenIssuer, startTestEndpoint, testKeys, testPan, type Issuer } from "../gateway/support.ts";

/**
 * ISO 8583 reconciliation over a real socket: the scheme sends its totals for a settlement date
 * (0500), the endpoint compares them with what it decided that day and answers 0510 with field
 * 66 (1 in balance, 2 out of balance); a mismatch leaves a reconciliation run with its reasons.
 */
describe("ISO 8583 reconciliation messages on the scheme endpoint", () => {
  const bin = "476174";
  const pan = testPan(bin, 1);
  let db: TestDatabase;
  let keys: CardKeys;
  let endpoint: InboundEndpoint;
  let client: SchemeClient;
  let issuer: Issuer;
  let stan = 500;
  const nextStan = () => ++stan;
  const today = new Date().toISOString().slice(0, 10);
  const mmdd = today.slice(5, 7) + today.slice(8, 10);

  interface Totals { debits: [number, bigint]; debitReversals: [number, bigint]; credits?: [number, bigint] }
  function reconciliationRequest(totals: Totals, mti = "0500", stanOf = nextStan()): Message {
    const n = (value: number | bigint, width: number) => value.toString().padStart(width, "0");
    const credits = totals.credits ?? [0, 0n];
    const net = credits[1] - totals.debits[1] + totals.debitReversals[1];
    return {
      mti,
      fields: {
        7: transmissionNow(), 11: n(stanOf, 6), 15: mmdd, 32: "423935", 50: "978",
        74: n(credits[0], 10), 75: n(0, 10), 76: n(totals.debits[0], 10), 77: n(totals.debitReversals[0], 10),
        86: n(credits[1], 16), 87: n(0, 16), 88: n(totals.debits[1], 16), 89: n(totals.debitReversals[1], 16),
        97: `${net < 0n ? "D" : "C"}${n(net < 0n ? -net : net, 16)}`, 100: bin,
      },
    };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    issuer = await givenIssuer(db.pool, keys, { name: "issuer-recon", pans: [pan], balanceMinor: 100_000n });
    endpoint = await startTestEndpoint(db.pool, keys);
    client = await connectClient(endpoint);
    // The day on our side: three financial debits (0200), one of them reversed (0400), and an
    // authorization hold (0100) that settles nothing.
    const purchases = [1_000n, 2_500n, 700n].map((amountMinor) => cardRequest({ mti: "0200", pan, amountMinor, stan: nextStan() }));
    for (const purchase of purchases) expect((await client.request(purchase)).fields[39]).toBe("00");
    expect((await client.request(reversalOf(purchases[2] as Message, { stan: nextStan() }))).fields[39]).toBe("00");
    expect((await client.request(cardRequest({ pan, amountMinor: 4_000n, stan: nextStan() }))).fields[39]).toBe("00");
  });
  afterAll(async () => {
    await client.close();
    await endpoint.close();
    await db.drop();
  });

  async function recorded(stanText: string): Promise<{ settlement_code: string; run_id: string | null; ours: Record<string, unknown> }[]> {
    const { rows } = await db.pool.query<{ settlement_code: string; run_id: string | null; ours: Record<string, unknown> }>(
      "SELECT settlement_code, run_id, ours FROM iso8583_recon_totals WHERE tenant_id = $1 AND natural_key LIKE $2", [issuer.tenantId, `%:${stanText}:%`]);
    return rows;
  }

  it("answers a 0500 whose totals agree with ours with 0510, field 66 = 1 (in balance) and 39 = 00, and starts no run", async () => {
    const request = reconciliationRequest({ debits: [3, 4_200n], debitReversals: [1, 700n] });
    const response = await client.request(request);
    expect(response.mti).toBe("0510");
    expect(response.fields[39]).toBe("00");
    expect(response.fields[66]).toBe("1");
    expect(response.fields[15]).toBe(mmdd);
    const rows = await recorded(String(request.fields[11]));
    expect(rows).toEqual([{ settlement_code: "1", run_id: null, ours: expect.objectContaining({ debits: { count: 3, amountMinor: "4200" }, debitReversals: { count: 1, amountMinor: "700" } }) }]);
  });

  it("answers a 0500 whose debit amount is a cent off with field 66 = 2 and records a run naming the difference and our transfers", async () => {
    const request = reconciliationRequest({ debits: [3, 4_201n], debitReversals: [1, 700n] });
    const response = await client.request(request);
    expect(response.fields[39]).toBe("00");
    expect(response.fields[66]).toBe("2");
    const [row] = await recorded(String(request.fields[11]));
    expect(row?.settlement_code).toBe("2");
    const run = await showRun(db.pool, issuer.tenantId, row?.run_id ?? "", 50);
    expect(run?.accountId).toBe(gatewayAccounts.scheme("EUR"));
    expect(run?.from).toBe(today);
    expect(run?.differences.amount_differs).toBe(1);
    expect(run?.matched).toBe(1);
    const differs = run?.results.find((r) => r.outcome === "amount_differs");
    expect(differs).toMatchObject({ rule: "scheme-totals", itemKeys: [`iso8583-totals:${today}:EUR:debits:3x4201`], theirsMinor: "-4201", oursMinor: "-4200", state: "open" });
    expect(differs?.transferKeys).toHaveLength(3);
    expect(differs?.transferKeys.every((k) => k.endsWith(":posting"))).toBe(true);
  });

  it("corrects an out-of-balance category once: the clearing account owes the scheme what it says, the cent waits in suspense", async () => {
    const request = reconciliationRequest({ debits: [3, 4_205n], debitReversals: [1, 700n] });
    expect((await client.request(request)).fields[66]).toBe("2");
    const [row] = await recorded(String(request.fields[11]));
    const run = await showRun(db.pool, issuer.tenantId, row?.run_id ?? "", 50);
    const differenceId = run?.results.find((r) => r.outcome === "amount_differs")?.differenceId ?? "";
    const owedBefore = await balance(db.pool, issuer.tenantId, gatewayAccounts.scheme("EUR"));
    const decision = { tenantId: issuer.tenantId, differenceId, reason: "scheme settles 5 more", operator: "ops" };
    expect((await correctDifference(db.pool, decision, today)).ok).toBe(true);
    expect((await correctDifference(db.pool, decision, today)).ok).toBe(true);
    // The clearing account is credit-balanced (what we owe the scheme): owing 5 more is 5 lower.
    expect(await balance(db.pool, issuer.tenantId, gatewayAccounts.scheme("EUR"))).toBe(owedBefore - 5n);
  });

  it("reports credits the scheme counts and we never decided as theirs_only", async () => {
    const request = reconciliationRequest({ debits: [3, 4_200n], debitReversals: [1, 700n], credits: [1, 900n] });
    const response = await client.request(request);
    expect(response.fields[66]).toBe("2");
    const [row] = await recorded(String(request.fields[11]));
    const run = await showRun(db.pool, issuer.tenantId, row?.run_id ?? "", 50);
    expect(run?.results[0]).toMatchObject({ outcome: "theirs_only", itemKeys: [`iso8583-totals:${today}:EUR:credits:1x900`], theirsMinor: "900", oursMinor: "0", transferKeys: [] });
    expect(run?.differences).toMatchObject({ theirs_only: 1, amount_differs: 0 });
  });

  it("answers a 0501 repeat from the record of its 0500, comparing once", async () => {
    const first = reconciliationRequest({ debits: [2, 4_200n], debitReversals: [1, 700n] });
    const answer = await client.request(first);
    const repeat = await client.request({ ...first, mti: "0501" });
    expect(repeat).toEqual(answer);
    expect(answer.fields[66]).toBe("2");
    expect(await recorded(String(first.fields[11]))).toHaveLength(1);
  });

  it("answers a 0520 advice with 0530 and the settlement code", async () => {
    const response = await client.request(reconciliationRequest({ debits: [3, 4_200n], debitReversals: [1, 700n] }, "0520"));
    expect(response.mti).toBe("0530");
    expect(response.fields[39]).toBe("00");
    expect(response.fields[66]).toBe("1");
  });

  it("answers a 0500 for a BIN nobody issues with 15 and records nothing", async () => {
    const base = reconciliationRequest({ debits: [0, 0n], debitReversals: [0, 0n] });
    const request: Message = { ...base, fields: { ...base.fields, 100: "999999" } };
    const response = await client.request(request);
    expect(response.fields[39]).toBe("15");
    expect(await recorded(String(request.fields[11]))).toEqual([]);
  });

  it("answers a 0500 without its totals with a format error (30)", async () => {
    const { 88: _omitted, ...fields } = reconciliationRequest({ debits: [3, 4_200n], debitReversals: [1, 700n] }).fields;
    const request: Message = { mti: "0500", fields };
    const response = await client.request(request);
    expect(response.mti).toBe("0510");
    expect(response.fields[39]).toBe("30");
  });
});
