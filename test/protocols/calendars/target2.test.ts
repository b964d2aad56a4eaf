import { describe, expect, it } from "vitest";
import { datesFromTo, date, shippedCalendar } from "./calendar-support.ts";

/**
 * TARGET2 (T2) closing days as the ECB publishes them, written out by hand: New Year's Day,
 * Good Friday, Easter Monday, 1 May (Labour Day), Christmas Day and 26 December. A closing day
 * on a weekend is listed as it falls and moved nowhere. Easter Sundays: 2022-04-17, 2023-04-09,
 * 2024-03-31, 2025-04-20, 2026-04-05, 2027-03-28.
 */
const publishedTarget2ClosingDays: Record<number, string[]> = {
  2022: ["2022-01-01", "2022-04-15", "2022-04-18", "2022-05-01", "2022-12-25", "2022-12-26"],
  2023: ["2023-01-01", "2023-04-07", "2023-04-10", "2023-05-01", "2023-12-25", "2023-12-26"],
  2024: ["2024-01-01", "2024-03-29", "2024-04-01", "2024-05-01", "2024-12-25", "2024-12-26"],
  2025: ["2025-01-01", "2025-04-18", "2025-04-21", "2025-05-01", "2025-12-25", "2025-12-26"],
  2026: ["2026-01-01", "2026-04-03", "2026-04-06", "2026-05-01", "2026-12-25", "2026-12-26"],
  2027: ["2027-01-01", "2027-03-26", "2027-03-29", "2027-05-01", "2027-12-25", "2027-12-26"],
};

const target2 = shippedCalendar("target2");

describe("the TARGET2 calendar (target2)", () => {
  for (const [year, published] of Object.entries(publishedTarget2ClosingDays)) {
    it(`places the closing days of ${year} on the published dates`, () => {
      expect(target2.holidaysOf(Number(year)).map((holiday) => holiday.date)).toEqual(published);
    });

    it(`is closed on each weekday the list of ${year} names, and open on every other one`, () => {
      const closed = new Set<string>(published);
      for (const day of datesFromTo(`${year}-01-01`, `${year}-12-31`)) {
        const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
        const open = weekday !== 0 && weekday !== 6 && !closed.has(day);
        expect(target2.isBusinessDay(day), day).toBe(open);
      }
    });
  }

  it("moves no closing day that falls on a weekend", () => {
    expect(target2.holidaysOf(2022).every((holiday) => holiday.movedFrom === undefined)).toBe(true);
    expect(target2.isBusinessDay(date("2022-05-02"))).toBe(true);    // 1 May 2022 was a Sunday
    expect(target2.isBusinessDay(date("2027-12-27"))).toBe(true);    // 25, 26 December 2027
    expect(target2.isBusinessDay(date("2021-12-31"))).toBe(true);    // 1 January 2022: a Saturday
  });

  it("hangs Good Friday and Easter Monday on the Gregorian Easter, early and late", () => {
    // Easter 2008 fell on 23 March, Easter 2038 falls on 25 April (the latest possible date).
    expect(target2.holidaysOf(2008).map((holiday) => holiday.date)).toContain("2008-03-21");
    expect(target2.holidaysOf(2008).map((holiday) => holiday.date)).toContain("2008-03-24");
    expect(target2.holidaysOf(2038).map((holiday) => holiday.date)).toContain("2038-04-23");
    expect(target2.holidaysOf(2038).map((holiday) => holiday.date)).toContain("2038-04-26");
  });
});
