import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configuredCalendar } from "../../src/config/calendar-closings-config.ts";
import { loadConfig } from "../../src/config/config.ts";
import { limits } from "../../src/config/limits.ts";
import { calendarDateOf } from "../../src/protocols/calendars/index.ts";

/** The environment of a service whose config file holds `calendarClosings`. */
function withClosings(calendarClosings: unknown, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = mkdtempSync(path.join(tmpdir(), "clearline-closings-"));
  const file = path.join(home, "config.json");
  writeFileSync(file, JSON.stringify({ calendarClosings }));
  return { CLEARLINE_HOME: home, CLEARLINE_CONFIG: file, ...env };
}

function day(text: string) {
  const read = calendarDateOf(text);
  if (!read.ok) throw new Error(read.error.message);
  return read.value;
}

describe("unscheduled calendar closings in the configuration", () => {
  it("are none by default", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: "/tmp/clearline-config-test-none" });
    expect(loaded.ok && loaded.value.calendarClosings).toEqual([]);
  });

  it("close the named calendar on the configured date, and no other calendar", () => {
    const loaded = loadConfig(withClosings([
      { calendar: "us-federal-reserve", date: "2025-09-02", reason: "an unscheduled closing" },
    ]));
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join("; "));
    const fed = configuredCalendar("us-federal-reserve", loaded.value);
    const target2 = configuredCalendar("target2", loaded.value);
    if (!fed.ok || !target2.ok) throw new Error("both calendars are shipped");
    expect(fed.value.businessDayOnOrAfter(day("2025-08-30")))
      .toEqual({ ok: true, value: "2025-09-03" });
    expect(target2.value.isBusinessDay(day("2025-09-02"))).toBe(true);
  });

  it("are read from CLEARLINE_CALENDAR_CLOSINGS instead of the file when it is set", () => {
    const env = withClosings([{ calendar: "target2", date: "2025-06-02" }], {
      CLEARLINE_CALENDAR_CLOSINGS: "us-federal-reserve:2025-09-02, target2:2025-09-03",
    });
    const loaded = loadConfig(env);
    expect(loaded.ok && loaded.value.calendarClosings).toEqual([
      { calendar: "us-federal-reserve", date: "2025-09-02" },
      { calendar: "target2", date: "2025-09-03" },
    ]);
  });

  it("refuse a closing for a calendar nobody ships, naming the entry", () => {
    const loaded = loadConfig(withClosings([
      { calendar: "target2", date: "2025-06-02" }, { calendar: "us-fed", date: "2025-06-02" },
    ]));
    expect(loaded).toMatchObject({ ok: false, errors: [
      { code: "CONFIG_INVALID", position: { field: "calendarClosings[1].calendar" } },
    ] });
  });

  it("refuse a closing on no date, naming the entry, from the file or the environment", () => {
    expect(loadConfig(withClosings([{ calendar: "target2", date: "2025-02-30" }]))).toMatchObject({
      ok: false,
      errors: [{ code: "CONFIG_INVALID", position: { field: "calendarClosings[0].date" } }],
    });
    const env = withClosings([], { CLEARLINE_CALENDAR_CLOSINGS: "target2:2025-06-02,target2" });
    expect(loadConfig(env)).toMatchObject({ ok: false, errors: [
      { code: "CONFIG_INVALID", position: { field: "CLEARLINE_CALENDAR_CLOSINGS[1].date" } },
    ] });
  });

  it("refuse a list one past its bound, and take one at it", () => {
    const closingsMax = limits.calendars.configuredClosingsMax;
    const closing = { calendar: "target2", date: "2025-06-02" };
    const closings = (count: number): unknown[] => Array.from({ length: count }, () => closing);
    expect(loadConfig(withClosings(closings(closingsMax))).ok).toBe(true);
    expect(loadConfig(withClosings(closings(closingsMax + 1)))).toMatchObject({
      ok: false, errors: [{ code: "CONFIG_INVALID", position: { field: "calendarClosings" } }],
    });
  });
});
