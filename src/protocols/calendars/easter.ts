import { dayNumberOf, type DayNumber } from "./calendar-date.ts";

/**
 * Easter Sunday of a Gregorian year: the anonymous Gregorian computus (Meeus/Jones/Butcher), the
 * rule the Western churches follow and TARGET's Good Friday and Easter Monday hang on.
 */
export function easterSundayOf(year: number): DayNumber {
  const a = year % 19;                         // place in the 19-year lunar (Metonic) cycle
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);       // the lunar correction
  const h = (19 * a + b - d - g + 15) % 30;    // the epact: days from the new to the full moon
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;  // days from the full moon to the next Sunday
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return dayNumberOf(year, month, day);
}
