import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import type { OutboxLagOfHour } from "../../outbox/outbox-store.ts";
import type { OutcomesOfDay } from "../../records/index.ts";
import type { SuspenseBalanceOfDay } from "../../ledger/index.ts";
import type { BarChartData } from "./bar-chart.ts";

/** The outcomes of a file's records, in the order the files page counts them, with colours. */
const outcomeColors: ReadonlyArray<[string, string]> = [
  ["applied", "#2a9d8f"], ["duplicate", "#8d99ae"], ["conflict", "#e63946"],
  ["suspect", "#f4a261"], ["rejected", "#6d597a"], ["orphan", "#e9c46a"],
];

// Age buckets of open review items and differences: within the hour (fresh), within the day
// (today's work), within the week (late), older (forgotten).
export const AGE_BOUNDS_SECONDS: readonly number[] = [3_600, 86_400, 604_800];
export const AGE_BUCKET_NAMES: readonly string[] = ["< 1 h", "1 h - 1 d", "1 d - 7 d", "> 7 d"];

/** The days from `today` back `days - 1` days, oldest first, as YYYY-MM-DD. */
export function lastDays(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  const dayMs = 86_400_000;
  return Array.from({ length: days }, (_, i) =>
    new Date(end - (days - 1 - i) * dayMs).toISOString().slice(0, 10));
}

/** Records per day (every day of the window, none left out) by outcome, stacked. */
export function recordsPerDayChart(
  rows: readonly OutcomesOfDay[], days: readonly string[],
): BarChartData {
  const count = (day: string, outcome: string) =>
    rows.find((r) => r.day === day && r.outcome === outcome)?.records ?? 0;
  return {
    id: "records-per-day", caption: "Records per day, by outcome", categoryName: "day",
    categories: days,
    series: outcomeColors.map(([outcome, color]) => ({
      name: outcome, color, values: days.map((day) => String(count(day, outcome))),
    })),
  };
}

/** Open review items and open differences side by side, per age bucket. */
export function openItemsByAgeChart(
  reviews: readonly number[], differences: readonly number[],
): BarChartData {
  return {
    id: "open-by-age", caption: "Open review items and reconciliation differences, by age",
    categoryName: "age", categories: AGE_BUCKET_NAMES,
    series: [
      { name: "review items", color: "#e63946", values: reviews.map(String) },
      { name: "differences", color: "#457b9d", values: differences.map(String) },
    ],
  };
}

/** The suspense balance at the end of each day, one chart per currency, in decimals. */
export function suspenseBalanceCharts(rows: readonly SuspenseBalanceOfDay[]): BarChartData[] {
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  return currencies.map((currency) => {
    const ofCurrency = rows.filter((r) => r.currency === currency);
    return {
      id: `suspense-balance-${currency}`,
      caption: `Suspense balance at the end of each day, ${currency}`,
      categoryName: "day", categories: ofCurrency.map((r) => r.day),
      series: [{
        name: `balance (${currency})`, color: "#f4a261",
        values: ofCurrency.map((r) => minorToDecimal(r.balanceMinor, currency)),
      }],
    };
  });
}

/** The longest time a message written in each hour took to leave, in seconds. */
export function outboxLagHistoryChart(rows: readonly OutboxLagOfHour[]): BarChartData {
  return {
    id: "outbox-lag-per-hour",
    caption: "Outbox lag per hour: the slowest message's seconds to delivery",
    categoryName: "hour (UTC)", categories: rows.map((r) => r.hour.slice(5, 16).replace("T", " ")),
    series: [{
      name: "slowest (s)", color: "#1d3557", values: rows.map((r) => String(r.lagSecondsMax)),
    }],
  };
}
