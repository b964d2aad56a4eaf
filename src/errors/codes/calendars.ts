// Codes of business-day calendars (protocols/calendars/, docs/decisions/0092).
export const calendarErrorCodes = {
  CALENDAR_FILE_INVALID:
    "A calendar file lacks its name, weekend days, observance policy or list of holidays, or one"
    + " of them has the wrong shape.",
  CALENDAR_RULE_KIND_UNKNOWN:
    "A holiday rule's kind is not fixed, nth-weekday, last-weekday or easter-offset.",
  CALENDAR_RULE_INVALID:
    "A holiday rule's field is missing or out of range (a month outside 1..12, a day the month"
    + " does not have every year, an unknown weekday, an nth outside 1..4, an Easter offset past"
    + " ten weeks, a first year outside the covered years).",
  CALENDAR_DATE_INVALID:
    "A date is not a calendar date written YYYY-MM-DD (a month 13, a 30 February, a time or"
    + " zone appended).",
  CALENDAR_DATE_OUT_OF_RANGE:
    "A date, or the business day a step from it reaches, lies outside the years the calendars"
    + " are computed for (limits.calendars).",
  CALENDAR_UNKNOWN:
    "No business-day calendar has this name; the shipped ones are in protocols/calendars/.",
  CALENDAR_BUSINESS_DAYS_TOO_MANY:
    "A step of more business days than limits.calendars.businessDaysStepMax, forward or back,"
    + " or not a whole number of them.",
} as const satisfies Record<string, string>;
