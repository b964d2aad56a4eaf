import { limits } from "../../config/limits.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";

/**
 * A calendar date, `YYYY-MM-DD`, checked: a real day of the proleptic Gregorian calendar inside
 * the years the calendars cover. No time and no zone: a settlement day is a date wherever the
 * reader sits, so nothing here reads a clock or a `Date`.
 */
export type CalendarDate = string & { readonly calendarDate: unique symbol };

/** Days since 1970-01-01 (negative before): arithmetic on dates is arithmetic on these. */
export type DayNumber = number;

export const weekdayNames = [
  "sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
] as const;
export type Weekday = (typeof weekdayNames)[number];

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Reads `text` as a calendar date; a malformed or out-of-range one is a finding at `position`. */
export function calendarDateOf(
  text: unknown, position: Position = {},
): Result<CalendarDate, Finding> {
  const shown = typeof text === "string" ? JSON.stringify(text.slice(0, 40)) : String(text);
  const match = typeof text === "string" ? datePattern.exec(text) : null;
  const [year, month, day] = match
    ? [Number(match[1]), Number(match[2]), Number(match[3])]
    : [0, 0, 0];
  if (!match || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    const message = `${shown} is not a date written YYYY-MM-DD`;
    return fail(finding("CALENDAR_DATE_INVALID", message, position));
  }
  if (!isYearCovered(year)) return fail(outOfRange(shown, position));
  return ok(text as CalendarDate);
}

export function isYearCovered(year: number): boolean {
  return year >= limits.calendars.yearMin && year <= limits.calendars.yearMax;
}

export function outOfRange(what: string, position: Position): Finding {
  const { yearMin, yearMax } = limits.calendars;
  return finding("CALENDAR_DATE_OUT_OF_RANGE",
    `${what} lies outside the years the calendars cover, ${yearMin} to ${yearMax}`, position);
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Day number of a year, month (1..12) and day (H. Hinnant's days_from_civil). */
export function dayNumberOf(year: number, month: number, day: number): DayNumber {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100)
    + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Year, month (1..12) and day of a day number (H. Hinnant's civil_from_days). */
export function civilOf(dayNumber: DayNumber): { year: number; month: number; day: number } {
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1_460)
    + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra
    - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** 0 is Sunday ... 6 is Saturday; 1970-01-01 was a Thursday. */
export function weekdayIndexOf(dayNumber: DayNumber): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

export function dayNumberOfDate(date: CalendarDate): DayNumber {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  return dayNumberOf(year, month, day);
}

/** The date of a day number; only for day numbers whose year `isYearCovered`. */
export function dateOfDayNumber(dayNumber: DayNumber): CalendarDate {
  const { year, month, day } = civilOf(dayNumber);
  const text = `${String(year).padStart(4, "0")}-${pad2(month)}-${pad2(day)}`;
  return text as CalendarDate;
}

function pad2(value: number): string {
  return String(value).padStart(2, "0");
}
