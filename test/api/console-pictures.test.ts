import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { barChart } from "../../src/api/console/bar-chart.ts";
import {
  openItemsByAgeChart, recordsPerDayChart, suspenseBalanceCharts,
} from "../../src/api/console/pictures.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";
import { testWebhookKeys } from "../support/outbox.ts";
import { givenOperator, signIn, type OpsClient } from "../support/ops-client.ts";
import { fixture, givenScene, ingest, type Scene } from "../files/support.ts";

/** HTML text as it reads ("&lt; 1 h" -> "< 1 h"). */
function unescaped(text: string | undefined): string {
  return (text ?? "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

/** What a figure's bars say: "category|series" -> the value the bar is drawn from. */
function barsOf(figure: string): Map<string, string> {
  const bars = new Map<string, string>();
  for (const m of figure.matchAll(/<rect [^>]*data-category="([^"]*)" data-series="([^"]*)" data-value="([^"]*)"/g)) {
    bars.set(`${unescaped(m[1])}|${unescaped(m[2])}`, unescaped(m[3]));
  }
  return bars;
}

/** What a figure's table says: "category|series" -> the number in its cell. */
function tableOf(figure: string): Map<string, string> {
  const cells = new Map<string, string>();
  const table = /<table [^>]*class="chart-numbers"[\s\S]*?<\/table>/.exec(figure)?.[0] ?? "";
  for (const row of table.matchAll(/<tr><th scope="row">([^<]*)<\/th>([\s\S]*?)<\/tr>/g)) {
    for (const cell of (row[2] ?? "").matchAll(/<td class="num" data-series="([^"]*)">([^<]*)<\/td>/g)) {
      cells.set(`${unescaped(row[1])}|${unescaped(cell[1])}`, unescaped(cell[2]));
    }
  }
  return cells;
}

/** The figure of this id in a page. */
function figureOf(page: string, id: string): string {
  return new RegExp(`<figure id="${id}">[\\s\\S]*?</figure>`).exec(page)?.[0] ?? "";
}

/** The bar's height in the SVG, by category and series. */
function heightOf(figure: string, category: string, series: string): number {
  const rect = new RegExp(`<rect [^>]*height="(\\d+)"[^>]*data-category="${category}" data-series="${series}"`).exec(figure);
  return Number(rect?.[1] ?? "-1");
}

const today = () => new Date().toISOString().slice(0, 10);

describe("the console's pictures: SVG drawn on the server, the same numbers in a table", () => {
  it("draws each bar from the number its table shows, stacked per category, negatives below zero", () => {
    const days = ["2026-12-04", "2026-12-05"];
    const rows = [
      { day: "2026-12-04", outcome: "applied", records: 4 }, { day: "2026-12-04", outcome: "conflict", records: 1 },
      { day: "2026-12-05", outcome: "applied", records: 8 }, { day: "2026-12-05", outcome: "duplicate", records: 2 },
    ];
    const figure = barChart(recordsPerDayChart(rows, days)).text;
    expect(barsOf(figure)).toEqual(tableOf(figure));
    expect(tableOf(figure).get("2026-12-04|applied")).toBe("4");
    expect(tableOf(figure).get("2026-12-05|duplicate")).toBe("2");
    expect(tableOf(figure).get("2026-12-05|orphan")).toBe("0");
    // Drawn to one scale: 8 is twice 4, and the tallest stack (10) fills the plot.
    expect(heightOf(figure, "2026-12-05", "applied")).toBe(2 * heightOf(figure, "2026-12-04", "applied"));
    expect(heightOf(figure, "2026-12-05", "applied") + heightOf(figure, "2026-12-05", "duplicate")).toBe(140);

    const balances = barChart(suspenseBalanceCharts([
      { day: "2026-12-04", currency: "USD", balanceMinor: -35_000n },
      { day: "2026-12-05", currency: "USD", balanceMinor: 210_500n },
    ])[0] ?? recordsPerDayChart([], [])).text;
    expect(barsOf(balances)).toEqual(new Map([["2026-12-04|balance (USD)", "-350.00"], ["2026-12-05|balance (USD)", "2105.00"]]));
    expect(tableOf(balances)).toEqual(barsOf(balances));

    const ages = barChart(openItemsByAgeChart([2, 0, 1, 0], [0, 3, 0, 0])).text;
    expect(tableOf(ages)).toEqual(barsOf(ages));
    expect(tableOf(ages).get("1 h - 1 d|differences")).toBe("3");
  });

  describe("the pictures page over a known day", () => {
    let db: TestDatabase;
    let api: TestApi;
    let scene: Scene;
    let operator: OpsClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      api = await startTestApi(db.pool);
      scene = await givenScene(db.pool, "pictures");
      await addWebhookEndpoint(db.pool, scene.tenantId, "http://127.0.0.1:9/hooks", ["file.processed"], newSigningSecret(), testWebhookKeys());
      await givenAccounts(db.pool, scene.tenantId, [["payee-two", "customer"], ["settlement", "settlement"]]);
      await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:1000002", "payee-two");
      // The quickstart's day: the original applied, its correction repeats three, changes one, adds one.
      await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
      await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
      // A bank line nobody booked: one open difference.
      const csv = `id,date,amount,currency,reference,description\nB1,${today()},12.00,USD,B1,unknown wire\n`;
      const imported = await importExternalFile(db.pool, { tenantId: scene.tenantId, accountId: "settlement", name: "bank.csv", content: Buffer.from(csv), format: "csv" });
      expect(imported.ok).toBe(true);
      const run = await runReconciliation(db.pool, { tenantId: scene.tenantId, accountId: "settlement", from: today(), to: today() });
      expect(run.ok).toBe(true);
      operator = await signIn(api.baseUrl, "pictures", "vic", await givenOperator(db.pool, scene.tenantId, "vic", "viewer"));
    });
    afterAll(async () => {
      await api?.close();
      await db?.drop();
    });

    it("shows records per day by outcome, open items by age, the suspense balance and the outbox lag, each bar as its table says", async () => {
      const page = await operator.get("/console/pictures");
      expect(page.status).toBe(200);
      const ids = ["records-per-day", "open-by-age", "suspense-balance-USD", "outbox-lag-per-hour"];
      for (const id of ids) {
        const figure = figureOf(page.text, id);
        expect(figure, id).not.toBe("");
        expect(tableOf(figure).size, id).toBeGreaterThan(0);
        expect(barsOf(figure), id).toEqual(tableOf(figure));
      }
      const records = tableOf(figureOf(page.text, "records-per-day"));
      expect(["applied", "duplicate", "conflict", "suspect", "rejected", "orphan"].map((o) => records.get(`${today()}|${o}`)))
        .toEqual(["6", "3", "1", "0", "0", "0"]);
      const ages = tableOf(figureOf(page.text, "open-by-age"));
      expect([ages.get("< 1 h|review items"), ages.get("< 1 h|differences"), ages.get("> 7 d|review items")]).toEqual(["1", "1", "0"]);
      const { rows } = await db.pool.query<{ balance: string }>(
        `SELECT (sum(CASE WHEN e.direction = 'C' THEN e.amount_minor ELSE -e.amount_minor END) / 100.0)::numeric(20, 2)::text AS balance
           FROM ledger_entry e JOIN account a ON a.tenant_id = e.tenant_id AND a.account_id = e.account_id
          WHERE e.tenant_id = $1 AND a.kind = 'suspense'`, [scene.tenantId]);
      expect(tableOf(figureOf(page.text, "suspense-balance-USD")).get(`${today()}|balance (USD)`)).toBe(rows[0]?.balance);
      const outbox = tableOf(figureOf(page.text, "outbox-lag-per-hour"));
      expect([1, 2]).toContain(outbox.size);   // both file.processed events: this hour (or the last)
    });
  });
});
