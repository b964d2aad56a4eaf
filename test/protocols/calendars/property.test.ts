import fc from "fast-check";
import { describe, expect, it } from "vitest";
import federalReserveJson
  from "../../../protocols/calendars/us-federal-reserve.json" with { type: "json" };
import target2Json from "../../../protocols/calendars/target2.json" with { type: "json" };
import { limits } from "../../../src/config/limits.ts";
import { isErrorCode } from "../../../src/errors/catalog.ts";
import {
  calendarDateOf, readCalendarRules, type CalendarDate,
} from "../../../src/protocols/calendars/index.ts";
import { dateOfDayNumber, dayNumberOf } from "../../../src/protocols/calendars/calendar-date.ts";
import { easterSundayOf } from "../../../src/protocols/calendars/easter.ts";
import { shippedCalendar } from "./calendar-support.ts";

const { yearMin, yearMax } = limits.calendars;
const firstDay = dayNumberOf(yearMin, 1, 1);
const lastDay = dayNumberOf(yearMax, 12, 31);

/** A copy of `value` with the member at `path` (indexes taken modulo) replaced by `replacement`. */
function replaced(value: unknown, path: number[], replacement: unknown): unknown {
  if (path.length === 0 || typeof value !== "object" || value === null) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<string, unknown>;
  const keys = Object.keys(copy);
  if (keys.length === 0) return replacement;
  const key = keys[(path[0] as number) % keys.length] as string;
  copy[key] = replaced(copy[key], path.slice(1), replacement);
  return copy;
}

describe("calendars on any input (property-based)", () => {
  it("read any JSON value as a calendar or as findings with catalog codes, never throw", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const read = readCalendarRules(value, "any.json");
      if (!read.ok) for (const found of read.error) expect(isErrorCode(found.code)).toBe(true);
    }), { numRuns: 500 });
  });

  it("read a shipped file with any one member replaced as a calendar or findings naming it", () => {
    const shipped = [federalReserveJson, target2Json];
    fc.assert(fc.property(fc.nat(1), fc.array(fc.nat(), { maxLength: 4 }), fc.jsonValue(),
      (which, path, replacement) => {
        const read = readCalendarRules(replaced(shipped[which], path, replacement), "mutated.json");
        if (!read.ok) {
          expect(read.error.length).toBeGreaterThan(0);
          for (const found of read.error) expect(found.position.file).toBe("mutated.json");
        }
      }), { numRuns: 500 });
  });

  it("read any text as a date or as a finding, never an exception", () => {
    fc.assert(fc.property(fc.string({ maxLength: 30 }), (text) => {
      const read = calendarDateOf(text);
      if (read.ok) expect(read.value).toBe(text);
      else expect(read.error.code).toMatch(/^CALENDAR_DATE_(INVALID|OUT_OF_RANGE)$/);
    }), { numRuns: 1_000 });
  });

  it("number every covered day as the ISO calendar does", () => {
    for (let day = firstDay; day <= lastDay; day++) {
      const iso = new Date(day * 86_400_000).toISOString().slice(0, 10);
      if (dateOfDayNumber(day) !== iso) expect(dateOfDayNumber(day)).toBe(iso);
    }
  });

  it("put Easter on a Sunday from 22 March to 25 April in every covered year", () => {
    for (let year = yearMin; year <= yearMax; year++) {
      const easter = easterSundayOf(year);
      expect(new Date(easter * 86_400_000).getUTCDay(), String(year)).toBe(0);
      expect(easter).toBeGreaterThanOrEqual(dayNumberOf(year, 3, 22));
      expect(easter).toBeLessThanOrEqual(dayNumberOf(year, 4, 25));
    }
  });

  it("land every step on a business day, and count it back, or refuse it", () => {
    const calendars = [shippedCalendar("us-federal-reserve"), shippedCalendar("target2")];
    const stepMax = limits.calendars.businessDaysStepMax;
    fc.assert(fc.property(fc.nat(1), fc.integer({ min: firstDay, max: lastDay }),
      fc.integer({ min: -stepMax, max: stepMax }), (which, day, count) => {
        const calendar = calendars[which]!;
        const start: CalendarDate = dateOfDayNumber(day);
        const reached = calendar.addBusinessDays(start, count);
        if (!reached.ok) {
          expect(reached.error.code).toBe("CALENDAR_DATE_OUT_OF_RANGE");
          return;
        }
        if (count !== 0) expect(calendar.isBusinessDay(reached.value)).toBe(true);
        if (!calendar.isBusinessDay(start)) return;
        expect(calendar.businessDaysBetween(start, reached.value)).toBe(count);
      }), { numRuns: 300 });
  });
});
