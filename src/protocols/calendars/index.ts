import federalReserveJson
  from "../../../protocols/calendars/us-federal-reserve.json" with { type: "json" };
import target2Json from "../../../protocols/calendars/target2.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";
import { businessCalendarOf, type BusinessCalendar } from "./business-calendar.ts";
import type { CalendarDate } from "./calendar-date.ts";
import { readCalendarRules, type CalendarRules } from "./calendar-rules.ts";

export { businessCalendarOf, type BusinessCalendar } from "./business-calendar.ts";
export { calendarDateOf, type CalendarDate } from "./calendar-date.ts";
export { readCalendarRules, type CalendarRules, type HolidayRule } from "./calendar-rules.ts";
export type { CalendarHoliday } from "./holidays.ts";

/** The calendars clearline ships, read from protocols/calendars/ once, by name. */
const shippedFiles: ReadonlyArray<[string, unknown]> = [
  ["protocols/calendars/us-federal-reserve.json", federalReserveJson],
  ["protocols/calendars/target2.json", target2Json],
];

const shippedRules = new Map<string, CalendarRules>();
for (const [file, source] of shippedFiles) {
  const read = readCalendarRules(source, file);
  // A shipped file that does not read is our bug, not input: stop at load.
  assert(read.ok, `${file} reads: ${read.ok ? "" : read.error.map((e) => e.message).join("; ")}`);
  assert(!shippedRules.has(read.value.name), `calendar ${read.value.name} is shipped once`);
  shippedRules.set(read.value.name, read.value);
}

export const calendarNames: readonly string[] = [...shippedRules.keys()];

/**
 * The shipped calendar `name`, closed also on `closings` (unscheduled closings from
 * configuration: src/config/calendar-closings-config.ts).
 */
export function calendarNamed(
  name: string, closings: readonly CalendarDate[] = [], position: Position = {},
): Result<BusinessCalendar, Finding> {
  const rules = shippedRules.get(name);
  if (rules === undefined) {
    const known = calendarNames.join(", ");
    const message = `no calendar is named ${JSON.stringify(name)}; known: ${known}`;
    return fail(finding("CALENDAR_UNKNOWN", message, position));
  }
  return ok(businessCalendarOf(rules, closings));
}
