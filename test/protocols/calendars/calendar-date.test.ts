import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import { calendarDateOf } from "../../../src/protocols/calendars/index.ts";

describe("calendar dates", () => {
  it("reads a date written YYYY-MM-DD, 29 February of a leap year included", () => {
    expect(calendarDateOf("2025-09-02")).toEqual({ ok: true, value: "2025-09-02" });
    expect(calendarDateOf("2024-02-29")).toEqual({ ok: true, value: "2024-02-29" });
  });

  it("refuses what is not a day of the calendar, naming where it was", () => {
    const bad = ["2025-02-29", "2100-02-29", "2025-13-01", "2025-04-31", "2025-9-2",
      "2025-09-02T00:00:00Z", "", 20250902, undefined];
    for (const text of bad) {
      const field = "calendarClosings[0].date";
      expect(calendarDateOf(text, { field }), String(text)).toMatchObject({
        ok: false, error: { code: "CALENDAR_DATE_INVALID", position: { field } },
      });
    }
  });

  it("refuses a year one past either end of the covered years", () => {
    const { yearMin, yearMax } = limits.calendars;
    expect(calendarDateOf(`${yearMin}-01-01`).ok).toBe(true);
    expect(calendarDateOf(`${yearMax}-12-31`).ok).toBe(true);
    for (const text of [`${yearMin - 1}-12-31`, `${yearMax + 1}-01-01`]) {
      expect(calendarDateOf(text))
        .toMatchObject({ ok: false, error: { code: "CALENDAR_DATE_OUT_OF_RANGE" } });
    }
  });
});
