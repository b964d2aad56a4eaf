import { limits } from "../../config/limits.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";
import {
  civilOf, dateOfDayNumber, dayNumberOfDate, isYearCovered, outOfRange, weekdayIndexOf,
  weekdayNames, type CalendarDate, type DayNumber,
} from "./calendar-date.ts";
import type { CalendarRules } from "./calendar-rules.ts";
import { holidaysOfYear, type CalendarHoliday } from "./holidays.ts";

/**
 * Business days of one calendar: its rules, plus the unscheduled closings configuration adds.
 * Pure: the same dates in, the same answers out; a walk that would leave the covered years, or
 * a step past its bound, is a finding, never a guess.
 */
export interface BusinessCalendar {
  readonly name: string;
  /** The holidays observed in a year (the published list), unscheduled closings left out. */
  holidaysOf(year: number): CalendarHoliday[];
  isBusinessDay(date: CalendarDate): boolean;
  /** `date` itself if it is a business day, else the first one after it: where a date rolls. */
  businessDayOnOrAfter(date: CalendarDate, position?: Position): Result<CalendarDate, Finding>;
  /** The first business day after `date`. */
  nextBusinessDay(date: CalendarDate, position?: Position): Result<CalendarDate, Finding>;
  /**
   * The `count`-th business day after `date` (before it when `count` is negative); `date` need
   * not be one. `count` 0 is `date` unchanged. For a business day `date`,
   * businessDaysBetween(date, addBusinessDays(date, n)) is n.
   */
  addBusinessDays(
    date: CalendarDate, count: number, position?: Position,
  ): Result<CalendarDate, Finding>;
  /** Business days after `from` up to and including `to`; negative the other way round. */
  businessDaysBetween(from: CalendarDate, to: CalendarDate): number;
}

export function businessCalendarOf(
  rules: CalendarRules, closings: readonly CalendarDate[] = [],
): BusinessCalendar {
  const weekend = new Set(rules.weekendDays.map((day) => weekdayNames.indexOf(day)));
  const closedByYear = new Map<number, Set<DayNumber>>();
  const closed = (day: DayNumber): Set<DayNumber> => {
    const year = civilOf(day).year;
    let days = closedByYear.get(year);
    if (days === undefined) {
      days = new Set(holidaysOfYear(rules, year).map((holiday) => dayNumberOfDate(holiday.date)));
      closedByYear.set(year, days);
    }
    return days;
  };
  const extra = new Set(closings.map(dayNumberOfDate));
  const isOpen = (day: DayNumber): boolean =>
    !weekend.has(weekdayIndexOf(day)) && !extra.has(day) && !closed(day).has(day);
  const walk = (
    date: CalendarDate, count: number, position: Position,
  ): Result<CalendarDate, Finding> => {
    const { businessDaysStepMax } = limits.calendars;
    if (!Number.isSafeInteger(count) || Math.abs(count) > businessDaysStepMax) {
      return fail(finding("CALENDAR_BUSINESS_DAYS_TOO_MANY",
        `a step of ${count} business days; at most ${businessDaysStepMax} either way`, position));
    }
    const step = Math.sign(count);
    let day = dayNumberOfDate(date);
    for (let left = Math.abs(count); left > 0;) {
      day += step;
      if (!isYearCovered(civilOf(day).year)) {
        return fail(outOfRange(`${count} business days from ${date}`, position));
      }
      if (isOpen(day)) left--;
    }
    return ok(dateOfDayNumber(day));
  };
  return {
    name: rules.name,
    holidaysOf: (year) => holidaysOfYear(rules, year),
    isBusinessDay: (date) => isOpen(dayNumberOfDate(date)),
    businessDayOnOrAfter: (date, position = {}) =>
      isOpen(dayNumberOfDate(date)) ? ok(date) : walk(date, 1, position),
    nextBusinessDay: (date, position = {}) => walk(date, 1, position),
    addBusinessDays: (date, count, position = {}) => walk(date, count, position),
    businessDaysBetween: (from, to) => {
      const [start, end] = [dayNumberOfDate(from), dayNumberOfDate(to)];
      const [low, high] = start <= end ? [start, end] : [end, start];
      let count = 0;
      for (let day = low + 1; day <= high; day++) if (isOpen(day)) count++;
      return start <= end ? count : -count;
    },
  };
}
