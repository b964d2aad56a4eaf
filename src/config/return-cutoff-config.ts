import { finding, type Finding } from "../errors/finding.ts";

/**
 * When `clearline serve` cuts a partner's ACH returns (config file `returnCutoffs`): times of day
 * in UTC, "HH:MM". Read with the rest of the configuration: this module imports no database code.
 */
export interface ReturnCutoffSetting {
  tenant: string;     // name or id
  partner: string;    // name or id
  timesUtc: string[]; // "HH:MM", e.g. ["15:00", "21:30"]
}

type Source = Record<string, unknown>;

const text = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

export function returnCutoffSettings(file: Source, errors: Finding[]): ReturnCutoffSetting[] {
  const raw = file.returnCutoffs;
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    errors.push(finding("CONFIG_INVALID", "returnCutoffs must be a list", { field: "returnCutoffs" }));
    return [];
  }
  const settings: ReturnCutoffSetting[] = [];
  for (const [index, entry] of (raw as Source[]).entries()) {
    const where = `returnCutoffs[${index}]`;
    const times: unknown = entry?.timesUtc;
    if (!text(entry?.tenant) || !text(entry.partner) || !Array.isArray(times) || times.length === 0 || !times.every((t) => typeof t === "string" && TIME.test(t))) {
      errors.push(finding("CONFIG_INVALID", `${where} needs tenant, partner and timesUtc, a non-empty list of "HH:MM" times of day in UTC`, { field: where }));
      continue;
    }
    settings.push({ tenant: entry.tenant, partner: entry.partner, timesUtc: times as string[] });
  }
  return settings;
}

/** The latest configured cut-off at or before `now` (today's or yesterday's, UTC). */
export function latestCutoff(timesUtc: readonly string[], now: Date): Date {
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const DAY_MS = 86_400_000;
  let latest = Number.NEGATIVE_INFINITY;
  for (const time of timesUtc) {
    const [hours, minutes] = time.split(":").map(Number) as [number, number];
    const today = dayStart + (hours * 60 + minutes) * 60_000;
    latest = Math.max(latest, today <= now.getTime() ? today : today - DAY_MS);
  }
  return new Date(latest);
}
