import {
  calendarDateOf, calendarNamed, type BusinessCalendar, type CalendarDate,
} from "../../../src/protocols/calendars/index.ts";

/** A date the test writes out: a typo in it is a broken test, not a finding to look at. */
export function date(text: string): CalendarDate {
  const read = calendarDateOf(text);
  if (!read.ok) throw new Error(`test date ${text}: ${read.error.message}`);
  return read.value;
}

export function shippedCalendar(name: string, closings: readonly string[] = []): BusinessCalendar {
  const found = calendarNamed(name, closings.map(date));
  if (!found.ok) throw new Error(found.error.message);
  return found.value;
}

/** Every date from `from` to `to`, both included (ISO dates sort as text). */
export function datesFromTo(from: string, to: string): CalendarDate[] {
  const dates: CalendarDate[] = [];
  const day = new Date(`${from}T00:00:00Z`);
  while (day.toISOString().slice(0, 10) <= to) {
    dates.push(date(day.toISOString().slice(0, 10)));
    day.setUTCDate(day.getUTCDate() + 1);
  }
  return dates;
}
