import timeFramesJson from "../../../protocols/nacha/return-time-frames.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";
import {
  calendarDateOf, calendarNamed, type BusinessCalendar, type CalendarDate,
} from "../calendars/index.ts";
import { dateOfDayNumber, dayNumberOfDate } from "../calendars/calendar-date.ts";
import { isReturnReasonCode, returnForm } from "./codes.ts";

/**
 * NACHA's return time frames per return reason code (protocols/nacha/return-time-frames.json,
 * docs/decisions/0094). Pure: the calendar and the dates come in, the answer goes out; no clock.
 */
export type TimeFrameName =
  | "two-banking-days" | "sixty-calendar-days" | "dishonored" | "contested" | "none";

/** Which entry's settlement date the window counts from. */
export type CountedFrom =
  | "original-settlement" | "return-settlement" | "dishonored-settlement";

export interface TimeFrame {
  readonly name: Exclude<TimeFrameName, "none">;
  readonly from: CountedFrom;
  readonly bankingDays?: number;
  readonly calendarDays?: number;
  readonly rule: string;
}

/** A return against its deadline: the last day by whose opening it had to be available. */
export type ReturnTimeliness =
  | { kind: "timely"; reasonCode: string; deadline: CalendarDate; timeFrame: TimeFrame }
  | { kind: "late"; reasonCode: string; deadline: CalendarDate; timeFrame: TimeFrame }
  | { kind: "no-deadline"; reasonCode: string; why: string };

const frameNames = ["two-banking-days", "sixty-calendar-days", "dishonored", "contested"];
const countedFrom = ["original-settlement", "return-settlement", "dishonored-settlement"];
const noneRule = timeFramesJson.timeFrames.none.rule;

const frames = new Map<string, TimeFrame>();
for (const [name, raw] of Object.entries(timeFramesJson.timeFrames)) {
  if (name === "none") continue;
  const frame = raw as Omit<TimeFrame, "name">;
  assert(frameNames.includes(name), `time frame ${name} is one the code knows`);
  assert(countedFrom.includes(frame.from), `time frame ${name} counts from a known date`);
  // Exactly one of the two units, a whole positive number of days.
  const days = frame.bankingDays ?? frame.calendarDays;
  assert((frame.bankingDays === undefined) !== (frame.calendarDays === undefined)
    && Number.isSafeInteger(days) && (days ?? 0) > 0, `time frame ${name} has one count of days`);
  frames.set(name, { ...frame, name: name as TimeFrame["name"] });
}

const frameOfCode = new Map<string, TimeFrame | "none">();
for (const [code, name] of Object.entries(timeFramesJson.byCode)) {
  assert(isReturnReasonCode(code), `${code} in return-time-frames.json is a return reason code`);
  const frame = name === "none" ? "none" : frames.get(name);
  assert(frame !== undefined, `${code} names a time frame of the file (${name})`);
  // The dishonored and contested ranges of codes.json and their time frames agree.
  const form = returnForm(code);
  const fits = frame === "none" || (form === "return"
    ? frame.name !== "dishonored" && frame.name !== "contested"
    : frame.name === form);
  assert(fits, `${code}'s time frame fits its ${form} form`);
  frameOfCode.set(code, frame);
}

/** The time frame of a return reason code; "none": none this gateway can hold the return to. */
export function timeFrameOf(reasonCode: string): TimeFrame | "none" | undefined {
  return frameOfCode.get(reasonCode);
}

/**
 * The deadline of a return with `reasonCode` whose window opens at `settlementDate` (the original
 * entry's for a return; the return's for a dishonored return; the dishonored return's for a
 * contested one): the day by whose opening of business it must be available.
 */
export function returnDeadlineOf(
  calendar: BusinessCalendar, frame: TimeFrame, settlementDate: CalendarDate,
  position: Position = {},
): Result<CalendarDate, Finding> {
  if (frame.bankingDays !== undefined) {
    return calendar.addBusinessDays(settlementDate, frame.bankingDays, position);
  }
  assert(frame.calendarDays !== undefined, `time frame ${frame.name} counts days`);
  const last = plusCalendarDays(settlementDate, frame.calendarDays, position);
  if (!last.ok) return last;
  // "the banking day following the sixtieth calendar day"
  return calendar.nextBusinessDay(last.value, position);
}

/** Timely or late: `returnDate` on or before the deadline is timely. */
export function judgeReturn(
  calendar: BusinessCalendar,
  request: { reasonCode: string; settlementDate: CalendarDate; returnDate: CalendarDate },
  position: Position = {},
): Result<ReturnTimeliness, Finding> {
  const { reasonCode, settlementDate, returnDate } = request;
  const frame = timeFrameOf(reasonCode);
  if (frame === undefined) {
    if (isReturnReasonCode(reasonCode)) {
      const why = `${reasonCode} is not assigned a time frame (return-time-frames.json)`;
      return ok({ kind: "no-deadline", reasonCode, why });
    }
    const message = `${JSON.stringify(reasonCode.slice(0, 8))} is not a return reason code`;
    return fail(finding("ACH_RETURN_REASON_CODE_INVALID", message, position));
  }
  if (frame === "none") return ok({ kind: "no-deadline", reasonCode, why: noneRule });
  const deadline = returnDeadlineOf(calendar, frame, settlementDate, position);
  if (!deadline.ok) return deadline;
  const kind = returnDate <= deadline.value ? "timely" : "late";
  return ok({ kind, reasonCode, deadline: deadline.value, timeFrame: frame });
}

/** `date` plus `days` calendar days, as day numbers: no clock, no zone. */
function plusCalendarDays(
  date: CalendarDate, days: number, position: Position,
): Result<CalendarDate, Finding> {
  return calendarDateOf(dateOfDayNumber(dayNumberOfDate(date) + days), position);
}

/** ACH settles on the Federal Reserve's banking days (docs/decisions/0092, 0094). */
const achCalendarName = "us-federal-reserve";
const achCalendarFound = calendarNamed(achCalendarName);
assert(achCalendarFound.ok, `the shipped calendar ${achCalendarName} exists`);
const achCalendar: BusinessCalendar = achCalendarFound.value;

/** An ACH return judged by its dates, as clearline has them (docs/decisions/0094). */
export interface AchReturnDates {
  reasonCode: string;
  originalEffectiveDate: string;   // YYYY-MM-DD: stands for the original's settlement date
  returnDate: string;              // YYYY-MM-DD: the return's effective entry date
}

/**
 * A plain ACH return judged on the Federal Reserve calendar, each date rolled to the banking day
 * it settles on (an entry's Settlement Date is not kept: its effective entry date, rolled, stands
 * for it). Undefined when it cannot be judged: an invalid code or a date the calendar does not
 * cover; the caller then keeps its behaviour from before deadlines.
 */
export function judgeAchReturn(dates: AchReturnDates): ReturnTimeliness | undefined {
  const settlementDate = rolledToBankingDay(dates.originalEffectiveDate);
  const returnDate = rolledToBankingDay(dates.returnDate);
  if (settlementDate === undefined || returnDate === undefined) return undefined;
  const judged = judgeReturn(achCalendar, {
    reasonCode: dates.reasonCode, settlementDate, returnDate,
  });
  return judged.ok ? judged.value : undefined;
}

/** A date rolled to the ACH banking day it settles on; undefined when the calendar cannot say. */
export function rolledToBankingDay(text: string): CalendarDate | undefined {
  const date = calendarDateOf(text);
  if (!date.ok) return undefined;
  const day = achCalendar.businessDayOnOrAfter(date.value);
  return day.ok ? day.value : undefined;
}
