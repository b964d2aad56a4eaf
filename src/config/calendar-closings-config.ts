import { finding, type Finding, type Result } from "../errors/finding.ts";
import type { Position } from "../errors/position.ts";
import {
  calendarDateOf, calendarNamed, calendarNames, type BusinessCalendar, type CalendarDate,
} from "../protocols/calendars/index.ts";
import { limits } from "./limits.ts";

/**
 * Unscheduled closings (docs/decisions/0092): days a settlement system closes that its rules do
 * not place, such as a national day of mourning. Config file key `calendarClosings`, a list of
 * `{ "calendar": "us-federal-reserve", "date": "2030-01-09", "reason": "..." }`; or the
 * environment, CLEARLINE_CALENDAR_CLOSINGS="us-federal-reserve:2030-01-09,target2:2025-05-02",
 * which replaces the file's list. A closing for no shipped calendar, or on no date, stops the
 * service naming the entry: a closing silently dropped would settle money on a closed day.
 */
export interface CalendarClosingSetting {
  calendar: string;   // a shipped calendar's name (protocols/calendars/)
  date: CalendarDate;
  reason?: string;
}

type Source = Record<string, unknown>;

export function calendarClosingSettings(
  env: NodeJS.ProcessEnv, file: Source, errors: Finding[],
): CalendarClosingSetting[] {
  const fromEnv = env.CLEARLINE_CALENDAR_CLOSINGS;
  const fromEnvGiven = fromEnv !== undefined && fromEnv !== "";
  const field = fromEnvGiven ? "CLEARLINE_CALENDAR_CLOSINGS" : "calendarClosings";
  const raw = fromEnvGiven ? entriesOfEnv(fromEnv) : file.calendarClosings;
  if (raw === undefined) return [];
  const { configuredClosingsMax } = limits.calendars;
  if (!Array.isArray(raw) || raw.length > configuredClosingsMax) {
    const message = `${field} must be a list of at most ${configuredClosingsMax} closings`;
    errors.push(finding("CONFIG_INVALID", message, { field }));
    return [];
  }
  const settings: CalendarClosingSetting[] = [];
  for (const [index, entry] of raw.entries()) {
    const setting = closingOf(entry, `${field}[${index}]`, errors);
    if (setting) settings.push(setting);
  }
  return settings;
}

/** `name:date,name:date` as the entries the file would hold. */
function entriesOfEnv(text: string): Source[] {
  return text.split(",").map((part) => {
    const at = part.lastIndexOf(":");
    if (at < 0) return { calendar: part.trim() };
    return { calendar: part.slice(0, at).trim(), date: part.slice(at + 1).trim() };
  });
}

function closingOf(
  entry: unknown, where: string, errors: Finding[],
): CalendarClosingSetting | undefined {
  const refuse = (field: string, why: string): undefined => {
    errors.push(finding("CONFIG_INVALID", `${field}: ${why}`, { field }));
    return undefined;
  };
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return refuse(where, "must be an object with calendar and date");
  }
  const { calendar, date, reason } = entry as Source;
  if (typeof calendar !== "string" || !calendarNames.includes(calendar)) {
    const known = calendarNames.join(", ");
    const why = `${JSON.stringify(calendar)} is not a calendar; known: ${known}`;
    return refuse(`${where}.calendar`, why);
  }
  const read = calendarDateOf(date, { field: `${where}.date` });
  if (!read.ok) return refuse(`${where}.date`, read.error.message);
  if (reason !== undefined && (typeof reason !== "string" || reason.length === 0)) {
    return refuse(`${where}.reason`, "must be a non-empty string when given");
  }
  const setting: CalendarClosingSetting = { calendar, date: read.value };
  if (reason !== undefined) setting.reason = reason;
  return setting;
}

/**
 * The shipped calendar `name` with the unscheduled closings configured for it: the calendar a
 * settlement date or a return deadline is computed on.
 */
export function configuredCalendar(
  name: string,
  config: { calendarClosings: readonly CalendarClosingSetting[] },
  position: Position = {},
): Result<BusinessCalendar, Finding> {
  const closings = config.calendarClosings.filter((closing) => closing.calendar === name);
  return calendarNamed(name, closings.map((closing) => closing.date), position);
}
