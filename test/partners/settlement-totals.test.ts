import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { partnerSettlementTotals } from "../../src/partners/settlement-totals.ts";
import { startTestApi, type TestApi } from "../support/api-server.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn } from "../support/ops-client.ts";
import {
  achFixtureDated, fixture, givenScene, ingest, noOutcomes, ppdCreditsDebitsDated, type Scene,
} from "../files/support.ts";

/**
 * Mixed traffic of one partner across the weekend of 5-6 December 2026: the five credits of
 * original.ach effective Friday 4 December; the credits and debits of ppd-credits-debits.ach
 * effective Saturday 5 December (they settle Monday 7 December); two returns of Friday's credits
 * dated Monday (timely: the deadline is Tuesday 8 December, docs/decisions/0094); a EUR pacs.008
 * settling Monday. Each day's totals from the view equal a hand-written sum of the same entries.
 */
const days = ["2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06", "2026-12-07", "2026-12-08"];

function pacs008SettlingOn(date: string): Buffer {
  const xml = fixture("iso20022/pacs008-v07.xml").toString("utf8");
  return Buffer.from(xml.replace(/<IntrBkSttlmDt>[^<]*</, `<IntrBkSttlmDt>${date}<`), "utf8");
}

interface HandSum {
  currency: string; credits: string; debits: string; returns: string; corrections: string;
  to_us: string; to_partner: string; net: string;
}

describe("a partner's expected settlement totals on a date, from our side", () => {
  let db: TestDatabase;
  let scene: Scene;
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "totals");
    const friday = await ingest(db.pool, scene, achFixtureDated("ach/original.ach", "261204"),
      "friday.ach");
    expect(friday.outcomes).toEqual({ ...noOutcomes, applied: 5 });
    const saturday = await ingest(db.pool, scene,
      ppdCreditsDebitsDated("261205"), "saturday.ach");
    expect(saturday.outcomes).toEqual({ ...noOutcomes, applied: 6 });
    const returns = await ingest(db.pool, scene,
      achFixtureDated("ach/payroll-returns.ach", "261207"), "returns.ach");
    expect(returns.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    await ingest(db.pool, scene, pacs008SettlingOn("2026-12-07"), "monday.xml");
  });
  afterAll(async () => { await db.drop(); });

  /**
   * Written independently of the view: the partner's settlement accounts by their id, the kind
   * of a return by its name, counts of transfers and sums of entries, as text.
   */
  async function handSums(date: string): Promise<HandSum[]> {
    const { rows } = await db.pool.query<HandSum>(
      `SELECT e.currency,
              count(DISTINCT t.transfer_key) FILTER (WHERE t.kind NOT LIKE '%return'
                AND t.kind NOT LIKE 'correction-%' AND t.kind <> 'recon_correction'
                AND e.direction = 'D')::text AS credits,
              count(DISTINCT t.transfer_key) FILTER (WHERE t.kind NOT LIKE '%return'
                AND t.kind NOT LIKE 'correction-%' AND t.kind <> 'recon_correction'
                AND e.direction = 'C')::text AS debits,
              count(DISTINCT t.transfer_key) FILTER (WHERE t.kind LIKE '%return')::text AS returns,
              count(DISTINCT t.transfer_key) FILTER (WHERE t.kind LIKE 'correction-%'
                OR t.kind = 'recon_correction')::text AS corrections,
              coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D'), 0)::text AS to_us,
              coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C'), 0)::text AS to_partner,
              sum(CASE e.direction WHEN 'D' THEN e.amount_minor ELSE -e.amount_minor END)::text
                AS net
         FROM ledger_entry e
         JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
        WHERE e.tenant_id = $1
          AND e.account_id IN ('partner.totals-clearing.settlement.USD',
                               'partner.totals-clearing.settlement.EUR')
          AND coalesce(t.settlement_date, t.value_date) = $2::date
        GROUP BY e.currency
        ORDER BY e.currency`,
      [scene.tenantId, date]);
    return rows;
  }

  async function viewSums(date: string): Promise<HandSum[]> {
    const read = await partnerSettlementTotals(db.pool, scene.tenantId, scene.partner.name, date);
    if (!read.ok) throw new Error(read.error.message);
    return read.value.currencies.map((c) => {
      const b = c.buckets;
      const sum = (key: "toUsMinor" | "toPartnerMinor") =>
        String(b.credits[key] + b.debits[key] + b.returns[key] + b.corrections[key]);
      return {
        currency: c.currency, credits: String(b.credits.count), debits: String(b.debits.count),
        returns: String(b.returns.count), corrections: String(b.corrections.count),
        to_us: sum("toUsMinor"), to_partner: sum("toPartnerMinor"), net: String(c.netToUsMinor),
      };
    }).sort((x, y) => x.currency.localeCompare(y.currency));
  }

  it("equals the hand-written sum of the entries settling each day of the week", async () => {
    for (const day of days) expect(await viewSums(day), day).toEqual(await handSums(day));
  });

  it("settles nothing on the weekend: Saturday's file is in Monday's totals", async () => {
    expect(await viewSums("2026-12-05")).toEqual([]);
    expect(await viewSums("2026-12-06")).toEqual([]);
    const monday = await viewSums("2026-12-07");
    expect(monday.map((m) => m.currency)).toEqual(["EUR", "USD"]);
    const usd = monday.find((m) => m.currency === "USD");
    // Every bucket the partner's figures name is there: credits, debits and the two returns.
    expect(usd).toMatchObject({ returns: "2", corrections: "0" });
    expect(Number(usd?.credits)).toBeGreaterThan(0);
    expect(Number(usd?.debits)).toBeGreaterThan(0);
    // Friday: the five credits of original.ach, 1,500.00 owed to us.
    expect(await viewSums("2026-12-04")).toEqual([{ currency: "USD", credits: "5", debits: "0",
      returns: "0", corrections: "0", to_us: "150000", to_partner: "0", net: "150000" }]);
  });

  it("names an unknown partner and a date that is none", async () => {
    const unknown = await partnerSettlementTotals(db.pool, scene.tenantId, "nobody", "2026-12-07");
    expect(unknown.ok ? "" : unknown.error.code).toBe("PARTNER_NOT_FOUND");
    const noDate = await partnerSettlementTotals(db.pool, scene.tenantId, scene.partner.name,
      "2026-02-30");
    expect(noDate.ok ? "" : noDate.error.code).toBe("CALENDAR_DATE_INVALID");
  });

  it("prints the same totals with clearline settlement totals --json", async () => {
    const run = await runCliInProcess(["settlement", "totals", "--tenant", "totals",
      "--partner", scene.partner.name, "--date", "2026-12-04", "--json"], { DATABASE_URL: db.url });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      partner: "totals-clearing", partner_id: scene.partner.partnerId,
      settlement_date: "2026-12-04",
      currencies: [{
        currency: "USD", account: "partner.totals-clearing.settlement.USD",
        credits: { count: 5, to_us: "1500.00", to_partner: "0.00" },
        debits: { count: 0, to_us: "0.00", to_partner: "0.00" },
        returns: { count: 0, to_us: "0.00", to_partner: "0.00" },
        corrections: { count: 0, to_us: "0.00", to_partner: "0.00" },
        net_to_us: "1500.00",
      }],
    });
    const bad = await runCliInProcess(["settlement", "totals", "--tenant", "totals",
      "--partner", "nobody", "--date", "2026-12-04"], { DATABASE_URL: db.url });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("PARTNER_NOT_FOUND");
  });

  describe("over HTTP, for a signed-in operator", () => {
    let api: TestApi;
    beforeAll(async () => { api = await startTestApi(db.pool); });
    afterAll(async () => { await api.close(); });

    it("answers GET /v1/ops/settlements with the view's totals, 404 for an unknown partner",
      async () => {
        const secret = await givenOperator(db.pool, scene.tenantId, "vera", "viewer");
        const vera = await signIn(api.baseUrl, "totals", "vera", secret);
        const path = `/v1/ops/settlements?partner=${scene.partner.name}&date=2026-12-07`;
        const answer = await vera.get(path);
        expect(answer.status).toBe(200);
        const currencies = answer.json.currencies as Array<{ currency: string; returns: unknown }>;
        expect(currencies.map((c) => c.currency)).toEqual(["EUR", "USD"]);
        const usd = (await viewSums("2026-12-07")).find((m) => m.currency === "USD");
        expect(currencies[1]?.returns).toMatchObject({ count: Number(usd?.returns) });
        expect((await vera.get("/v1/ops/settlements?partner=nobody&date=2026-12-07")).status)
          .toBe(404);
        expect((await vera.get(`/v1/ops/settlements?partner=x&date=2026-13-01`)).status)
          .toBe(400);
      });
  });
});
