import { assert } from "../assert.ts";
import { finding, type Finding } from "../errors/finding.ts";
import { calendarNames, type BusinessCalendar } from "../protocols/calendars/index.ts";
import { configuredCalendar, type CalendarClosingSetting } from "./calendar-closings-config.ts";
import { limits } from "./limits.ts";

/**
 * The calendar a clearing partner settles on (config file `partnerCalendars`, docs/decisions/
 * 0092): `[{ "tenant": "acme", "partner": "first-bank", "calendar": "us-federal-reserve" }]`,
 * tenant and partner by name or id as in `returnCutoffs`. Configuration rather than a column: a
 * partner's calendar is how it is connected, like its cut-off times, and needs no migration.
 */
export interface PartnerCalendarSetting {
  tenant: string;     // name or id
  partner: string;    // name or id
  calendar: string;   // a shipped calendar's name (protocols/calendars/)
}

type Source = Record<string, unknown>;

const text = (value: unknown): value is string => typeof value === "string" && value.length > 0;

export function partnerCalendarSettings(file: Source, errors: Finding[]): PartnerCalendarSetting[] {
  const raw = file.partnerCalendars;
  if (raw === undefined) return [];
  const { partnerCalendarsMax } = limits.calendars;
  if (!Array.isArray(raw) || raw.length > partnerCalendarsMax) {
    const message = `partnerCalendars must be a list of at most ${partnerCalendarsMax} entries`;
    errors.push(finding("CONFIG_INVALID", message, { field: "partnerCalendars" }));
    return [];
  }
  const settings: PartnerCalendarSetting[] = [];
  const named = new Set<string>();   // tenant and partner as written, a NUL between
  for (const [index, entry] of (raw as Source[]).entries()) {
    const where = `partnerCalendars[${index}]`;
    const refuse = (why: string): void => {
      errors.push(finding("CONFIG_INVALID", `${where}: ${why}`, { field: where }));
    };
    if (!text(entry?.tenant) || !text(entry.partner) || !text(entry.calendar)) {
      refuse("needs tenant, partner and calendar");
    } else if (!calendarNames.includes(entry.calendar)) {
      const known = calendarNames.join(", ");
      refuse(`${JSON.stringify(entry.calendar)} is not a calendar; known: ${known}`);
    } else if (named.has(`${entry.tenant}\u0000${entry.partner}`)) {
      refuse(`tenant ${entry.tenant} and partner ${entry.partner} are named twice`);
    } else {
      named.add(`${entry.tenant}\u0000${entry.partner}`);
      settings.push({ tenant: entry.tenant, partner: entry.partner, calendar: entry.calendar });
    }
  }
  return settings;
}

/**
 * The calendar the partner settles on, with the unscheduled closings configured for it;
 * undefined when configuration names none (the caller decides what that means for its date).
 */
export function partnerCalendar(
  config: {
    partnerCalendars: readonly PartnerCalendarSetting[];
    calendarClosings: readonly CalendarClosingSetting[];
  },
  tenant: { tenantId: string; name: string },
  partner: { partnerId: string; name: string },
): BusinessCalendar | undefined {
  const setting = config.partnerCalendars.find((each) =>
    (each.tenant === tenant.tenantId || each.tenant === tenant.name)
    && (each.partner === partner.partnerId || each.partner === partner.name));
  if (setting === undefined) return undefined;
  const found = configuredCalendar(setting.calendar, config);
  // The name was checked against the shipped calendars when the configuration was read.
  assert(found.ok, `partnerCalendars names the shipped calendar ${setting.calendar}`);
  return found.value;
}
