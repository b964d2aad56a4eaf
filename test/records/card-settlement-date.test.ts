import { describe, expect, it } from "vitest";
import { de } from "../../src/protocols/iso8583/index.ts";
import { cardRequest } from "../support/scheme-simulator.ts";
import { testPan, useSchemeScene } from "../gateway/support.ts";

/**
 * A card message's settlement date is its DE 15 (docs/decisions/0101), over a real socket to the
 * scheme endpoint. The DE 15 sent is ten days from today (MMDD), so its year is today's
 * nearest: the date the transfer must carry whatever day the test runs.
 */
describe("the settlement date of a card posting", () => {
  let stan = 900;
  const pan = testPan("476500", 7);
  const scene = useSchemeScene({ name: "card-settles", pans: [pan], balanceMinor: 100_000n });

  it("is the message's DE 15 (Date, settlement), not the day it was decided", async () => {
    const settles = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const request = cardRequest({ mti: "0200", pan, amountMinor: 300n, stan: ++stan });
    const message = { ...request, fields: {
      ...request.fields, [de.dateSettlement]: `${settles.slice(5, 7)}${settles.slice(8, 10)}`,
    } };
    const answer = await scene.client.request(message);
    expect(answer.fields[de.responseCode]).toBe("00");
    const { rows } = await scene.db.pool.query<{ settles: string; value: string }>(
      `SELECT to_char(settlement_date, 'YYYY-MM-DD') AS settles, to_char(value_date, 'YYYY-MM-DD') AS value
         FROM transfer WHERE tenant_id = $1 AND kind = 'card_posting'`, [scene.issuer.tenantId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.settles).toBe(settles);
    expect(rows[0]?.value).not.toBe(settles);
  });
});
