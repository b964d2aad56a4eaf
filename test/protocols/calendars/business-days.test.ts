import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import { date, datesFromTo, shippedCalendar } from "./calendar-support.ts";

const fed = shippedCalendar("us-federal-reserve");
const target2 = shippedCalendar("target2");

describe("business-day arithmetic", () => {
  it("rolls an ACH effective date on the Saturday before Labor Day to the Tuesday", () => {
    expect(fed.businessDayOnOrAfter(date("2025-08-30"))).toEqual({ ok: true, value: "2025-09-02" });
    expect(fed.nextBusinessDay(date("2025-08-30"))).toEqual({ ok: true, value: "2025-09-02" });
  });

  it("rolls the same Saturday to the Monday on TARGET2, which keeps no Labor Day", () => {
    expect(target2.businessDayOnOrAfter(date("2025-08-30")))
      .toEqual({ ok: true, value: "2025-09-01" });
  });

  it("leaves a business day where it is when rolling, and steps past it for the next one", () => {
    expect(fed.businessDayOnOrAfter(date("2025-09-02"))).toEqual({ ok: true, value: "2025-09-02" });
    expect(fed.nextBusinessDay(date("2025-09-02"))).toEqual({ ok: true, value: "2025-09-03" });
  });

  it("adds business days over a weekend and a holiday, and subtracts them back", () => {
    expect(fed.addBusinessDays(date("2025-12-24"), 1)).toEqual({ ok: true, value: "2025-12-26" });
    expect(fed.addBusinessDays(date("2025-12-24"), 3)).toEqual({ ok: true, value: "2025-12-30" });
    expect(fed.addBusinessDays(date("2025-12-30"), -3)).toEqual({ ok: true, value: "2025-12-24" });
    expect(fed.addBusinessDays(date("2026-01-02"), -1)).toEqual({ ok: true, value: "2025-12-31" });
    expect(target2.addBusinessDays(date("2025-12-24"), 1))
      .toEqual({ ok: true, value: "2025-12-29" });
  });

  it("adds nothing for a step of zero, even from a day that is not a business day", () => {
    expect(fed.addBusinessDays(date("2025-08-30"), 0)).toEqual({ ok: true, value: "2025-08-30" });
  });

  it("counts business days after the first date up to and including the second", () => {
    expect(fed.businessDaysBetween(date("2025-08-29"), date("2025-09-02"))).toBe(1);
    expect(fed.businessDaysBetween(date("2025-09-02"), date("2025-08-29"))).toBe(-1);
    expect(fed.businessDaysBetween(date("2025-09-02"), date("2025-09-02"))).toBe(0);
    expect(fed.businessDaysBetween(date("2024-12-31"), date("2025-12-31"))).toBe(250);
  });

  it("counts back what it added, from every business day of two years, either way", () => {
    for (const start of datesFromTo("2025-01-01", "2026-12-31").filter(fed.isBusinessDay)) {
      for (const count of [-23, -5, -1, 1, 2, 5, 23]) {
        const reached = fed.addBusinessDays(start, count);
        if (!reached.ok) throw new Error(reached.error.message);
        expect(fed.businessDaysBetween(start, reached.value), `${start} ${count}`).toBe(count);
      }
    }
  });

  it("skips an unscheduled closing configured for the calendar", () => {
    const closedOnce = shippedCalendar("us-federal-reserve", ["2025-09-02"]);
    expect(closedOnce.isBusinessDay(date("2025-09-02"))).toBe(false);
    expect(closedOnce.businessDayOnOrAfter(date("2025-08-30")))
      .toEqual({ ok: true, value: "2025-09-03" });
    expect(closedOnce.businessDaysBetween(date("2025-08-29"), date("2025-09-03"))).toBe(1);
    // The published list is the rules' own: an unscheduled closing is not a holiday of the year.
    expect(closedOnce.holidaysOf(2025).map((holiday) => holiday.date)).not.toContain("2025-09-02");
    expect(fed.isBusinessDay(date("2025-09-02"))).toBe(true);
  });

  it("refuses a step one past its bound, either way, and takes one at it", () => {
    const stepMax = limits.calendars.businessDaysStepMax;
    const start = date("2030-01-02");
    expect(fed.addBusinessDays(start, stepMax).ok).toBe(true);
    expect(fed.addBusinessDays(start, -stepMax).ok).toBe(true);
    for (const count of [stepMax + 1, -(stepMax + 1), 1.5, Number.NaN]) {
      expect(fed.addBusinessDays(start, count, { field: "days" })).toMatchObject({
        ok: false, error: { code: "CALENDAR_BUSINESS_DAYS_TOO_MANY", position: { field: "days" } },
      });
    }
  });

  it("refuses a walk past the last covered year rather than guessing its holidays", () => {
    const last = date(`${limits.calendars.yearMax}-12-31`);
    expect(fed.nextBusinessDay(last, { field: "effectiveDate" })).toMatchObject({ ok: false,
      error: { code: "CALENDAR_DATE_OUT_OF_RANGE", position: { field: "effectiveDate" } } });
    const first = date(`${limits.calendars.yearMin}-01-02`);
    expect(fed.addBusinessDays(first, -1))
      .toMatchObject({ ok: false, error: { code: "CALENDAR_DATE_OUT_OF_RANGE" } });
  });
});
