import { limits } from "../../config/limits.ts";
import type { ErrorCode } from "../../errors/catalog.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import { daysInMonth, isYearCovered, weekdayNames, type Weekday } from "./calendar-date.ts";

/**
 * A business-day calendar as data (protocols/calendars/*.json, docs/decisions/0092): the weekend,
 * how a holiday on a weekend is observed, and each holiday as the rule that places it in a year.
 * Rules rather than lists of dates, so that no year silently runs out; tests hold the rules to
 * the published lists.
 */
export interface CalendarRules {
  name: string;
  weekendDays: Weekday[];
  observance: Observance;
  holidays: Holiday[];
}

/**
 * Where a holiday falling on a Saturday or a Sunday is observed. `none`: not moved (closed on
 * the weekend day anyway). The Federal Reserve moves a Sunday to the Monday and a Saturday
 * nowhere: it is open the Friday before, unlike the federal government (`preceding-friday`).
 */
export interface Observance {
  saturday: "none" | "preceding-friday";
  sunday: "none" | "following-monday";
}

export interface Holiday {
  name: string;
  rule: HolidayRule;
  validFromYear?: number;   // its first year (Juneteenth: 2022 at the Reserve Banks)
}

export type HolidayRule =
  | { kind: "fixed"; month: number; day: number }
  | { kind: "nth-weekday"; month: number; weekday: Weekday; nth: number }   // nth: 1..4
  | { kind: "last-weekday"; month: number; weekday: Weekday }
  | { kind: "easter-offset"; days: number };   // days after Easter Sunday (Good Friday: -2)

export const holidayRuleKinds = ["fixed", "nth-weekday", "last-weekday", "easter-offset"] as const;

// Every feast hung on Easter lies within ten weeks of it (Septuagesima -63, Corpus Christi +60).
const easterOffsetDaysMax = 70;
const calendarNamePattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

type Source = Record<string, unknown>;

/**
 * Reads one calendar file. What is wrong is a finding with its code and where (`file` and the
 * member, as `holidays[3].rule.month`); every holiday is checked, so one reading names them all.
 */
export function readCalendarRules(source: unknown, file: string): Result<CalendarRules, Finding[]> {
  const findings: Finding[] = [];
  const at = (field: string, code: ErrorCode, message: string): undefined => {
    findings.push(finding(code, `${file}: ${field} ${message}`, { file, field }));
    return undefined;
  };
  if (!isObject(source)) {
    return fail([finding("CALENDAR_FILE_INVALID", `${file} is not a JSON object`, { file })]);
  }
  const name = typeof source.name === "string" && calendarNamePattern.test(source.name)
    ? source.name
    : at("name", "CALENDAR_FILE_INVALID", "must be lower-case letters, digits and '-'");
  const weekendDays = readWeekendDays(source.weekendDays, at);
  const observance = readObservance(source.observance, at);
  const holidays = readHolidays(source.holidays, at);
  if (findings.length > 0 || name === undefined || !weekendDays || !observance || !holidays) {
    return fail(findings);
  }
  return ok({ name, weekendDays, observance, holidays });
}

type Report = (field: string, code: ErrorCode, message: string) => undefined;

function readWeekendDays(raw: unknown, at: Report): Weekday[] | undefined {
  const distinct = Array.isArray(raw) && raw.every(isWeekday) && new Set(raw).size === raw.length;
  if (!distinct || raw.length >= weekdayNames.length) {
    const message = "must be a list of distinct weekday names, not all seven";
    return at("weekendDays", "CALENDAR_FILE_INVALID", message);
  }
  return raw;
}

function readObservance(raw: unknown, at: Report): Observance | undefined {
  if (!isObject(raw)) return at("observance", "CALENDAR_FILE_INVALID", "must be an object");
  const { saturday, sunday } = raw;
  if (saturday !== "none" && saturday !== "preceding-friday") {
    return at("observance.saturday", "CALENDAR_FILE_INVALID", "must be none or preceding-friday");
  }
  if (sunday !== "none" && sunday !== "following-monday") {
    return at("observance.sunday", "CALENDAR_FILE_INVALID", "must be none or following-monday");
  }
  return { saturday, sunday };
}

function readHolidays(raw: unknown, at: Report): Holiday[] | undefined {
  const { holidaysPerCalendarMax } = limits.calendars;
  if (!Array.isArray(raw) || raw.length > holidaysPerCalendarMax) {
    const message = `must be a list of at most ${holidaysPerCalendarMax} holidays`;
    return at("holidays", "CALENDAR_FILE_INVALID", message);
  }
  const holidays: Holiday[] = [];
  for (const [index, entry] of raw.entries()) {
    const holiday = readHoliday(entry, `holidays[${index}]`, at);
    if (holiday) holidays.push(holiday);
  }
  return holidays.length === raw.length ? holidays : undefined;
}

function readHoliday(raw: unknown, where: string, at: Report): Holiday | undefined {
  if (!isObject(raw)) return at(where, "CALENDAR_FILE_INVALID", "must be an object");
  const { name, validFromYear } = raw;
  if (typeof name !== "string" || name.length === 0) {
    return at(`${where}.name`, "CALENDAR_FILE_INVALID", "must be a non-empty string");
  }
  if (validFromYear !== undefined && !(isInteger(validFromYear) && isYearCovered(validFromYear))) {
    const { yearMin, yearMax } = limits.calendars;
    const message = `must be a year from ${yearMin} to ${yearMax}`;
    return at(`${where}.validFromYear`, "CALENDAR_RULE_INVALID", message);
  }
  const rule = readRule(raw.rule, `${where}.rule`, at);
  if (!rule) return undefined;
  return validFromYear === undefined ? { name, rule } : { name, rule, validFromYear };
}

function readRule(raw: unknown, where: string, at: Report): HolidayRule | undefined {
  if (!isObject(raw)) return at(where, "CALENDAR_FILE_INVALID", "must be an object");
  const invalid = (field: string, what: string): undefined =>
    at(`${where}.${field}`, "CALENDAR_RULE_INVALID", what);
  const { kind, month, day, weekday, nth, days } = raw;
  if (kind === "easter-offset") {
    const limit = easterOffsetDaysMax;
    if (isInteger(days) && Math.abs(days) <= limit) return { kind, days };
    return invalid("days", `must be a whole number from -${limit} to ${limit}`);
  }
  if (!(holidayRuleKinds as readonly unknown[]).includes(kind)) {
    const message = `${JSON.stringify(kind)} is not one of ${holidayRuleKinds.join(", ")}`;
    return at(`${where}.kind`, "CALENDAR_RULE_KIND_UNKNOWN", message);
  }
  if (!isInteger(month) || month < 1 || month > 12) {
    return invalid("month", "must be a month, 1 to 12");
  }
  if (kind === "fixed") {
    // A day every year has: a 29 February would vanish three years in four.
    const dayMax = daysInMonth(2001, month);
    if (isInteger(day) && day >= 1 && day <= dayMax) return { kind, month, day };
    return invalid("day", `must be a day from 1 to ${dayMax} of month ${month}`);
  }
  if (!isWeekday(weekday)) return invalid("weekday", `must be one of ${weekdayNames.join(", ")}`);
  if (kind === "last-weekday") return { kind, month, weekday };
  // Every month has four of each weekday, not always five: a fifth is `last-weekday` or nothing.
  if (isInteger(nth) && nth >= 1 && nth <= 4) return { kind: "nth-weekday", month, weekday, nth };
  return invalid("nth", "must be 1 to 4");
}

function isObject(value: unknown): value is Source {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown): value is number {
  return Number.isSafeInteger(value);
}

function isWeekday(value: unknown): value is Weekday {
  return (weekdayNames as readonly unknown[]).includes(value);
}
