import { assert } from "../assert.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import type { Position } from "../errors/position.ts";
import {
  calendarDateOf, calendarNamed, type BusinessCalendar, type CalendarDate,
} from "../protocols/calendars/index.ts";

/**
 * The day a record's money settles, per channel (docs/decisions/0101). Pure: dates and times
 * come in as text, a calendar as a value; no clock. A date the calendar cannot place (outside
 * the covered years) is a finding, never a guess.
 */

/**
 * The Federal Reserve's last same-day ACH submission deadline, 16:45 Eastern: an entry of a file
 * created by then, for that day, settles that day (0101). The file header's time is read as
 * Eastern.
 */
export const achSameDayLastWindowHhmm = "1645";

/**
 * The card scheme's daily cut-over (UTC) when a message carries no DE 15: a message decided at or
 * after it settles in the next business day's settlement (0101). One time for every scheme.
 */
export const cardSettlementCutoverUtcHhmm = "2100";

function shipped(name: string): BusinessCalendar {
  const found = calendarNamed(name);
  assert(found.ok, `the shipped calendar ${name} exists`);
  return found.value;
}

const shippedByCurrency: ReadonlyMap<string, BusinessCalendar> = new Map([
  ["USD", shipped("us-federal-reserve")],
  ["EUR", shipped("target2")],
]);

/** ACH settles on the Federal Reserve's banking days unless the partner names another (0092). */
export const achDefaultCalendar: BusinessCalendar = shipped("us-federal-reserve");

/** The calendar money in `currency` settles on, when clearline ships one (0101). */
export function calendarOfCurrency(currency: string): BusinessCalendar | undefined {
  return shippedByCurrency.get(currency);
}

export interface AchDelivery {
  fileCreationDate?: string;      // YYYY-MM-DD (file header field 9)
  fileCreationTimeHhmm?: string;  // HHMM (field 10), may be absent
}

/**
 * ACH: the effective entry date rolled to a business day; an entry for the day its file was
 * created (or earlier) is same-day: that day when the file was created by the last window and
 * the day is a business day, else the next business day.
 */
export function achSettlementDate(
  calendar: BusinessCalendar, effectiveDate: string, delivery: AchDelivery = {},
  position: Position = {},
): Result<CalendarDate, Finding> {
  const effective = calendarDateOf(effectiveDate, position);
  if (!effective.ok) return effective;
  const created = delivery.fileCreationDate === undefined
    ? undefined : calendarDateOf(delivery.fileCreationDate, position);
  if (created === undefined || !created.ok || effective.value > created.value) {
    return calendar.businessDayOnOrAfter(effective.value, position);
  }
  const time = delivery.fileCreationTimeHhmm ?? "";
  const inWindow = /^\d{4}$/.test(time) && time <= achSameDayLastWindowHhmm;
  if (inWindow && calendar.isBusinessDay(created.value)) return ok(created.value);
  return calendar.nextBusinessDay(created.value, position);
}

/**
 * ISO 8583: DE 15 (MMDD) in the year that puts it nearest the decision day; without it the
 * cut-over: decided before it, the decision day (rolled to a business day of the currency's
 * calendar); at or after it, the next business day (the next day without a calendar).
 */
export function cardSettlementDate(
  input: { decisionDate: string; decisionTimeUtcHhmm: string; currency: string; de15?: string },
  position: Position = {},
): Result<CalendarDate, Finding> {
  const decided = calendarDateOf(input.decisionDate, position);
  if (!decided.ok) return decided;
  if (input.de15 !== undefined) return nearestMonthDay(input.de15, decided.value, position);
  const calendar = calendarOfCurrency(input.currency);
  const afterCutover = input.decisionTimeUtcHhmm >= cardSettlementCutoverUtcHhmm;
  if (calendar === undefined) {
    return ok(afterCutover ? dayAfter(decided.value) : decided.value);
  }
  return afterCutover
    ? calendar.nextBusinessDay(decided.value, position)
    : calendar.businessDayOnOrAfter(decided.value, position);
}

/** HTTP: the business day of acceptance on the currency's calendar; the date itself without one. */
export function httpSettlementDate(
  acceptedDate: string, currency: string, position: Position = {},
): Result<CalendarDate, Finding> {
  const accepted = calendarDateOf(acceptedDate, position);
  if (!accepted.ok) return accepted;
  const calendar = calendarOfCurrency(currency);
  if (calendar === undefined) return accepted;
  return calendar.businessDayOnOrAfter(accepted.value, position);
}

/** MMDD in the year (of the day's, the one before or after) that puts it nearest `day`. */
export function nearestMonthDay(
  mmdd: string, day: CalendarDate, position: Position = {},
): Result<CalendarDate, Finding> {
  const year = Number(day.slice(0, 4));
  const candidates = [year - 1, year, year + 1]
    .map((y) => calendarDateOf(`${y}-${mmdd.slice(0, 2)}-${mmdd.slice(2)}`))
    .flatMap((date) => (date.ok ? [date.value] : []));
  if (!/^\d{4}$/.test(mmdd) || candidates.length === 0) {
    const message = `settlement date (DE 15) ${JSON.stringify(mmdd)} is not a MMDD date`;
    return fail(finding("CALENDAR_DATE_INVALID", message, position));
  }
  const distance = (date: string): number => Math.abs(Date.parse(date) - Date.parse(day));
  candidates.sort((a, b) => distance(a) - distance(b));
  return ok(candidates[0] as CalendarDate);
}

function dayAfter(date: CalendarDate): CalendarDate {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return next as CalendarDate;
}
