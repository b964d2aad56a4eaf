import { describe, expect, it } from "vitest";
import { datesFromTo, date, shippedCalendar } from "./calendar-support.ts";

/**
 * The Federal Reserve Bank Services holiday schedule (frbservices.org, "Holiday schedules"), as
 * published, written out by hand. A date marked (Sat) is a holiday on a Saturday: the Reserve
 * Banks are OPEN the Friday before. A date marked (Mon, for Sun) is a Sunday holiday observed
 * on the Monday. Juneteenth is a Reserve Bank holiday from 2022.
 */
const publishedFederalReserveHolidays: Record<number, string[]> = {
  2022: [
    "2022-01-01 (Sat)", "2022-01-17", "2022-02-21", "2022-05-30", "2022-06-20 (Mon, for Sun)",
    "2022-07-04", "2022-09-05", "2022-10-10", "2022-11-11", "2022-11-24",
    "2022-12-26 (Mon, for Sun)",
  ],
  2023: [
    "2023-01-02 (Mon, for Sun)", "2023-01-16", "2023-02-20", "2023-05-29", "2023-06-19",
    "2023-07-04", "2023-09-04", "2023-10-09", "2023-11-11 (Sat)", "2023-11-23", "2023-12-25",
  ],
  2024: [
    "2024-01-01", "2024-01-15", "2024-02-19", "2024-05-27", "2024-06-19", "2024-07-04",
    "2024-09-02", "2024-10-14", "2024-11-11", "2024-11-28", "2024-12-25",
  ],
  2025: [
    "2025-01-01", "2025-01-20", "2025-02-17", "2025-05-26", "2025-06-19", "2025-07-04",
    "2025-09-01", "2025-10-13", "2025-11-11", "2025-11-27", "2025-12-25",
  ],
  2026: [
    "2026-01-01", "2026-01-19", "2026-02-16", "2026-05-25", "2026-06-19", "2026-07-04 (Sat)",
    "2026-09-07", "2026-10-12", "2026-11-11", "2026-11-26", "2026-12-25",
  ],
  2027: [
    "2027-01-01", "2027-01-18", "2027-02-15", "2027-05-31", "2027-06-19 (Sat)",
    "2027-07-05 (Mon, for Sun)", "2027-09-06", "2027-10-11", "2027-11-11", "2027-11-25",
    "2027-12-25 (Sat)",
  ],
};

const fed = shippedCalendar("us-federal-reserve");
const dateOnly = (entry: string): string => entry.slice(0, 10);

describe("the Federal Reserve calendar (us-federal-reserve)", () => {
  for (const [year, published] of Object.entries(publishedFederalReserveHolidays)) {
    it(`places the holidays of ${year} on the published dates`, () => {
      const placed = fed.holidaysOf(Number(year)).map((holiday) => holiday.date);
      expect(placed).toEqual(published.map(dateOnly));
    });

    it(`is closed on each weekday the list of ${year} names, and open on every other one`, () => {
      const holidays = new Set(published.map(dateOnly));
      for (const day of datesFromTo(`${year}-01-01`, `${year}-12-31`)) {
        const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
        const open = weekday !== 0 && weekday !== 6 && !holidays.has(day);
        expect(fed.isBusinessDay(day), day).toBe(open);
      }
    });
  }

  it("observes a Sunday holiday on the Monday after and says which day it fell on", () => {
    const observed = fed.holidaysOf(2022).filter((holiday) => holiday.movedFrom !== undefined);
    expect(observed).toEqual([
      { date: "2022-06-20", name: "Juneteenth National Independence Day", movedFrom: "2022-06-19" },
      { date: "2022-12-26", name: "Christmas Day", movedFrom: "2022-12-25" },
    ]);
    expect(fed.isBusinessDay(date("2023-01-02"))).toBe(false);   // New Year's Day 2023, a Sunday
  });

  it("stays open on the Friday before a Saturday holiday (unlike the federal government)", () => {
    expect(fed.isBusinessDay(date("2021-12-31"))).toBe(true);    // New Year's Day 2022, a Saturday
    expect(fed.isBusinessDay(date("2023-11-10"))).toBe(true);    // Veterans Day 2023
    expect(fed.isBusinessDay(date("2026-07-03"))).toBe(true);    // Independence Day 2026
    expect(fed.isBusinessDay(date("2027-06-18"))).toBe(true);    // Juneteenth 2027
    expect(fed.isBusinessDay(date("2027-12-24"))).toBe(true);    // Christmas Day 2027
    expect(fed.holidaysOf(2021).map((holiday) => holiday.date)).not.toContain("2021-12-31");
  });

  it("keeps Juneteenth out of the years before 2022", () => {
    expect(fed.holidaysOf(2021).map((holiday) => holiday.name))
      .not.toContain("Juneteenth National Independence Day");
    expect(fed.isBusinessDay(date("2021-06-18"))).toBe(true);
  });
});
