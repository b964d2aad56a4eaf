// Bounds of the business-day calendars (src/protocols/calendars/, docs/decisions/0092).
export const calendarLimits = {
  // The first year the shipped rules describe: TARGET has had today's closing days since 2002,
  // and the Federal Reserve's list has been the one written in its file since then (Juneteenth
  // carries its own first year, 2022). Earlier dates are refused, not guessed.
  yearMin: 2002,
  // The last year computed. Rules change (Juneteenth was added in 2021), so a far date is a
  // guess; and no settlement or return deadline reaches decades ahead. A walk past it is refused.
  yearMax: 2099,
  // Business days one step may move, forward or back. The longest deadline issue 30 names (an
  // ACH return after 60 days) is far below; about four years of business days bounds each walk.
  businessDaysStepMax: 1_000,
  // Holidays one calendar file may hold: the busiest published calendars list about twenty.
  holidaysPerCalendarMax: 64,
  // Unscheduled closings configuration may add, over all calendars: a handful a decade happen.
  configuredClosingsMax: 1_000,
  // Partners configuration may name a calendar for (partnerCalendars): one entry a partner, and
  // far more partners than any deployment has today; the list is read once, at start.
  partnerCalendarsMax: 10_000,
} as const;
