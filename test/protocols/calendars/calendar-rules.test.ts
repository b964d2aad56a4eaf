import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import federalReserveJson
  from "../../../protocols/calendars/us-federal-reserve.json" with { type: "json" };
import {
  businessCalendarOf, calendarNamed, readCalendarRules,
} from "../../../src/protocols/calendars/index.ts";
import { date } from "./calendar-support.ts";

const file = "protocols/calendars/test.json";

/** A calendar file with one holiday of `rule`, the rest well formed. */
function withRule(rule: unknown, extra: Record<string, unknown> = {}): unknown {
  return {
    name: "test", weekendDays: ["saturday", "sunday"],
    observance: { saturday: "none", sunday: "none" },
    holidays: [
      { name: "First", rule: { kind: "fixed", month: 1, day: 1 } },
      { name: "Second", rule, ...extra },
    ],
  };
}

function findingsOf(source: unknown): unknown {
  const read = readCalendarRules(source, file);
  return read.ok ? [] : read.error;
}

describe("reading a calendar file", () => {
  it("reads the shipped Federal Reserve file to its eleven holidays", () => {
    const file = "protocols/calendars/us-federal-reserve.json";
    const read = readCalendarRules(federalReserveJson, file);
    expect(read.ok && read.value.holidays.length).toBe(11);
  });

  it("refuses an unknown rule kind, naming the file and the member", () => {
    expect(findingsOf(withRule({ kind: "full-moon", month: 3 }))).toMatchObject([{
      code: "CALENDAR_RULE_KIND_UNKNOWN", position: { file, field: "holidays[1].rule.kind" },
    }]);
  });

  it("refuses a month or a day no year has", () => {
    expect(findingsOf(withRule({ kind: "fixed", month: 13, day: 1 }))).toMatchObject([{
      code: "CALENDAR_RULE_INVALID", position: { file, field: "holidays[1].rule.month" },
    }]);
    for (const [month, day] of [[2, 29], [4, 31], [1, 0]]) {
      const found = findingsOf(withRule({ kind: "fixed", month, day }));
      expect(found, `${month}-${day}`).toMatchObject([{
        code: "CALENDAR_RULE_INVALID", position: { field: "holidays[1].rule.day" },
      }]);
    }
  });

  it("refuses a weekday rule with an unknown weekday or a fifth weekday some months lack", () => {
    const third = { kind: "nth-weekday", month: 1, nth: 3 };
    expect(findingsOf(withRule({ ...third, weekday: "mon" }))).toMatchObject([{
      code: "CALENDAR_RULE_INVALID", position: { field: "holidays[1].rule.weekday" },
    }]);
    expect(findingsOf(withRule({ ...third, weekday: "monday", nth: 5 }))).toMatchObject([{
      code: "CALENDAR_RULE_INVALID", position: { field: "holidays[1].rule.nth" },
    }]);
    expect(findingsOf(withRule({ kind: "last-weekday", month: 5, weekday: "monday" }))).toEqual([]);
  });

  it("refuses an Easter offset beyond ten weeks and a first year outside the covered years", () => {
    expect(findingsOf(withRule({ kind: "easter-offset", days: 71 }))).toMatchObject([{
      code: "CALENDAR_RULE_INVALID", position: { field: "holidays[1].rule.days" },
    }]);
    const before = withRule({ kind: "easter-offset", days: 1 }, { validFromYear: 1999 });
    expect(findingsOf(before)).toMatchObject([{
      code: "CALENDAR_RULE_INVALID", position: { field: "holidays[1].validFromYear" },
    }]);
  });

  it("names every bad holiday in one reading", () => {
    const source = withRule({ kind: "fixed", month: 0, day: 1 });
    const third = { name: "Third", rule: { kind: "solstice" } };
    (source as { holidays: unknown[] }).holidays.push(third);
    expect(findingsOf(source)).toMatchObject([
      { position: { field: "holidays[1].rule.month" } },
      { position: { field: "holidays[2].rule.kind" } },
    ]);
  });

  it("refuses a file without its shape: name, weekend, observance", () => {
    expect(findingsOf([])).toMatchObject([{ code: "CALENDAR_FILE_INVALID", position: { file } }]);
    const broken = { ...(withRule({ kind: "fixed", month: 1, day: 2 }) as object),
      name: "Fed Calendar", weekendDays: ["saturday", "sabbath"],
      observance: { saturday: "nearest", sunday: "none" } };
    expect(findingsOf(broken)).toMatchObject([
      { code: "CALENDAR_FILE_INVALID", position: { field: "name" } },
      { code: "CALENDAR_FILE_INVALID", position: { field: "weekendDays" } },
      { code: "CALENDAR_FILE_INVALID", position: { field: "observance.saturday" } },
    ]);
  });

  it("moves a Saturday holiday to the Friday before when a calendar says so", () => {
    // The federal government's rule, not the Federal Reserve's.
    const read = readCalendarRules({ ...(withRule({ kind: "fixed", month: 7, day: 4 }) as object),
      observance: { saturday: "preceding-friday", sunday: "following-monday" } }, file);
    if (!read.ok) throw new Error("the test calendar reads");
    const government = businessCalendarOf(read.value);
    // 1 January 2022 and 4 July 2026 fall on Saturdays.
    expect(government.holidaysOf(2021)).toEqual([
      { date: "2021-01-01", name: "First" },
      { date: "2021-07-05", name: "Second", movedFrom: "2021-07-04" },
      { date: "2021-12-31", name: "First", movedFrom: "2022-01-01" },
    ]);
    expect(government.isBusinessDay(date("2026-07-03"))).toBe(false);
  });

  it("refuses a file of one holiday past its bound, and reads one at it", () => {
    const holidaysMax = limits.calendars.holidaysPerCalendarMax;
    const source = withRule({ kind: "fixed", month: 1, day: 2 }) as { holidays: unknown[] };
    const holiday = { name: "Again", rule: { kind: "fixed", month: 3, day: 3 } };
    source.holidays = Array.from({ length: holidaysMax }, () => holiday);
    expect(findingsOf(source)).toEqual([]);
    source.holidays.push(holiday);
    expect(findingsOf(source))
      .toMatchObject([{ code: "CALENDAR_FILE_INVALID", position: { field: "holidays" } }]);
  });

  it("answers an unknown calendar name with a finding", () => {
    expect(calendarNamed("us-fed", [], { field: "calendar" })).toMatchObject({
      ok: false, error: { code: "CALENDAR_UNKNOWN", position: { field: "calendar" } },
    });
  });
});
