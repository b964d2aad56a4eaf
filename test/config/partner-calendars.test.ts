import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../src/config/config.ts";
import { limits } from "../../src/config/limits.ts";
import { partnerCalendar } from "../../src/config/partner-calendar-config.ts";
import { calendarDateOf } from "../../src/protocols/calendars/index.ts";

/** The configuration read from a config file holding `settings`. */
function configWith(settings: Record<string, unknown>): ReturnType<typeof loadConfig> {
  const home = mkdtempSync(path.join(tmpdir(), "clearline-partner-calendars-"));
  const file = path.join(home, "config.json");
  writeFileSync(file, JSON.stringify(settings));
  return loadConfig({ CLEARLINE_HOME: home, CLEARLINE_CONFIG: file });
}

function loaded(settings: Record<string, unknown>): Config {
  const read = configWith(settings);
  if (!read.ok) throw new Error(read.errors.map((e) => e.message).join("; "));
  return read.value;
}

const acme = { tenantId: "ten_1", name: "acme" };
const firstBank = { partnerId: "ptr_1", name: "first-bank" };
const euroBank = { partnerId: "ptr_2", name: "euro-bank" };

describe("a partner's calendar in the configuration", () => {
  it("is the calendar its entry names, found by tenant and partner name or id", () => {
    const config = loaded({ partnerCalendars: [
      { tenant: "acme", partner: "first-bank", calendar: "us-federal-reserve" },
      { tenant: "ten_1", partner: "ptr_2", calendar: "target2" },
    ] });
    expect(partnerCalendar(config, acme, firstBank)?.name).toBe("us-federal-reserve");
    expect(partnerCalendar(config, acme, euroBank)?.name).toBe("target2");
    const other = { tenantId: "ten_2", name: "other" };
    expect(partnerCalendar(config, other, firstBank)).toBeUndefined();
  });

  it("carries the unscheduled closings configured for that calendar", () => {
    const config = loaded({
      partnerCalendars: [{ tenant: "acme", partner: "first-bank", calendar: "us-federal-reserve" }],
      calendarClosings: [{ calendar: "us-federal-reserve", date: "2025-09-02" }],
    });
    const saturday = calendarDateOf("2025-08-30");
    if (!saturday.ok) throw new Error(saturday.error.message);
    expect(partnerCalendar(config, acme, firstBank)?.businessDayOnOrAfter(saturday.value))
      .toEqual({ ok: true, value: "2025-09-03" });
  });

  it("refuses an entry naming no shipped calendar, or a partner twice, naming the entry", () => {
    expect(configWith({ partnerCalendars: [
      { tenant: "acme", partner: "first-bank", calendar: "fedwire" },
    ] })).toMatchObject({ ok: false, errors: [
      { code: "CONFIG_INVALID", position: { field: "partnerCalendars[0]" } },
    ] });
    expect(configWith({ partnerCalendars: [
      { tenant: "acme", partner: "first-bank", calendar: "target2" },
      { tenant: "acme", partner: "first-bank", calendar: "us-federal-reserve" },
    ] })).toMatchObject({ ok: false, errors: [
      { code: "CONFIG_INVALID", position: { field: "partnerCalendars[1]" } },
    ] });
  });

  it("refuses a list one past its bound", () => {
    const entries = Array.from({ length: limits.calendars.partnerCalendarsMax + 1 },
      (_, index) => ({ tenant: "acme", partner: `partner-${index}`, calendar: "target2" }));
    expect(configWith({ partnerCalendars: entries })).toMatchObject({ ok: false, errors: [
      { code: "CONFIG_INVALID", position: { field: "partnerCalendars" } },
    ] });
    expect(configWith({ partnerCalendars: entries.slice(1) }).ok).toBe(true);
  });
});
