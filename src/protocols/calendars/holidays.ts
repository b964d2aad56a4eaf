import { assertNever } from "../../assert.ts";
import {
  civilOf, dateOfDayNumber, dayNumberOf, daysInMonth, weekdayIndexOf, weekdayNames,
  type CalendarDate, type DayNumber,
} from "./calendar-date.ts";
import type { CalendarRules, Holiday, HolidayRule } from "./calendar-rules.ts";
import { easterSundayOf } from "./easter.ts";

/** A holiday as a published list shows it: the day it closes, and the day it fell on if moved. */
export interface CalendarHoliday {
  date: CalendarDate;
  name: string;
  movedFrom?: CalendarDate;   // a Sunday holiday observed on the Monday: the Sunday
}

const saturday = 6;
const sunday = 0;

/**
 * The holidays of `rules` observed in `year`, in date order. A holiday moved by the observance
 * rule counts in the year it is observed (a 1 January on a Saturday moved to the Friday before
 * closes the year before), so the years on either side are placed too.
 */
export function holidaysOfYear(rules: CalendarRules, year: number): CalendarHoliday[] {
  const found: Array<{ day: DayNumber; holiday: CalendarHoliday }> = [];
  for (const placedYear of [year - 1, year, year + 1]) {
    for (const holiday of rules.holidays) {
      if (!isValidIn(holiday, placedYear)) continue;
      const actual = dayOfRule(holiday.rule, placedYear);
      const observed = observedDay(rules, actual);
      if (civilOf(observed).year !== year) continue;
      const entry: CalendarHoliday = { date: dateOfDayNumber(observed), name: holiday.name };
      if (observed !== actual) entry.movedFrom = dateOfDayNumber(actual);
      found.push({ day: observed, holiday: entry });
    }
  }
  return found.sort((a, b) => a.day - b.day).map((each) => each.holiday);
}

function isValidIn(holiday: Holiday, year: number): boolean {
  return holiday.validFromYear === undefined || year >= holiday.validFromYear;
}

function observedDay(rules: CalendarRules, actual: DayNumber): DayNumber {
  const weekday = weekdayIndexOf(actual);
  if (weekday === saturday && rules.observance.saturday === "preceding-friday") return actual - 1;
  if (weekday === sunday && rules.observance.sunday === "following-monday") return actual + 1;
  return actual;
}

/** The day a rule places its holiday in `year`. */
export function dayOfRule(rule: HolidayRule, year: number): DayNumber {
  switch (rule.kind) {
    case "fixed":
      return dayNumberOf(year, rule.month, rule.day);
    case "nth-weekday": {
      const first = dayNumberOf(year, rule.month, 1);
      return first + daysUntil(first, rule.weekday) + 7 * (rule.nth - 1);
    }
    case "last-weekday": {
      const last = dayNumberOf(year, rule.month, daysInMonth(year, rule.month));
      const back = (weekdayIndexOf(last) - weekdayNames.indexOf(rule.weekday) + 7) % 7;
      return last - back;
    }
    case "easter-offset":
      return easterSundayOf(year) + rule.days;
    default:
      return assertNever(rule, "holiday rule kind");
  }
}

/** Days from `day` to the first `weekday` on or after it (0..6). */
function daysUntil(day: DayNumber, weekday: (typeof weekdayNames)[number]): number {
  return (weekdayNames.indexOf(weekday) - weekdayIndexOf(day) + 7) % 7;
}
