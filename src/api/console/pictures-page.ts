import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { suspenseBalancePerDay } from "../../ledger/index.ts";
import { outboxLagPerHour } from "../../outbox/outbox-store.ts";
import { openDifferenceAgeCounts } from "../../recon/differences.ts";
import { openReviewAgeCounts, outcomesPerDay } from "../../records/index.ts";
import { operatorOf } from "../operator-session.ts";
import { barChart } from "./bar-chart.ts";
import { html } from "./html.ts";
import {
  AGE_BOUNDS_SECONDS, lastDays, openItemsByAgeChart, outboxLagHistoryChart, recordsPerDayChart,
  suspenseBalanceCharts,
} from "./pictures.ts";
import { shell } from "./shell.ts";

// What the pictures span: two weeks of days (the files page's chart spans as many), and the last
// day of hours for the outbox (a relay's trouble shows within hours; older lag is history).
const DAYS_SHOWN = 14;
const OUTBOX_HOURS_SHOWN = 24;

/**
 * The pictures page (issue 33, item 4): records per day by outcome, open review items and
 * differences by age, the suspense balance per day and the outbox lag per hour, each drawn on
 * the server as SVG with its numbers in a table for screen readers. Read through the services'
 * front doors; nothing is computed here but the layout.
 */
export function registerPicturesPage(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/pictures", async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const today = new Date().toISOString().slice(0, 10);
    const [outcomes, reviews, differences, suspense, outbox] = await Promise.all([
      outcomesPerDay(deps.pool, tenantId, DAYS_SHOWN),
      openReviewAgeCounts(deps.pool, tenantId, AGE_BOUNDS_SECONDS),
      openDifferenceAgeCounts(deps.pool, tenantId, AGE_BOUNDS_SECONDS),
      suspenseBalancePerDay(deps.pool, tenantId, DAYS_SHOWN),
      outboxLagPerHour(deps.pool, tenantId, OUTBOX_HOURS_SHOWN),
    ]);
    const charts = [
      recordsPerDayChart(outcomes, lastDays(today, DAYS_SHOWN)),
      openItemsByAgeChart(reviews, differences),
      ...suspenseBalanceCharts(suspense),
      outboxLagHistoryChart(outbox),
    ];
    return shell(request, reply, "Pictures", html`${charts.map(barChart)}`);
  });
}
