import { describe, expect, it } from "vitest";
import {
  achDefaultCalendar, achSettlementDate, cardSettlementDate, httpSettlementDate,
} from "../../src/normalize/settlement-date.ts";

/** The settlement date rules of docs/decisions/0101, on the shipped calendars. */
describe("settlement dates per channel", () => {
  const ach = (effective: string, created?: string, time?: string) => achSettlementDate(
    achDefaultCalendar, effective,
    { ...(created ? { fileCreationDate: created } : {}), ...(time ? { fileCreationTimeHhmm: time } : {}) });

  it("settles an ACH entry effective on a Saturday on the Monday after", () => {
    expect(ach("2026-12-05", "2026-12-04", "1015")).toEqual({ ok: true, value: "2026-12-07" });
  });

  it("skips a Federal Reserve holiday: effective on Christmas Day (a Friday) settles Monday", () => {
    expect(ach("2026-12-25", "2026-12-23", "1015")).toEqual({ ok: true, value: "2026-12-28" });
  });

  it("settles an entry effective on a Saturday before a Monday holiday on the Tuesday", () => {
    // Martin Luther King Jr. Day 2027 is Monday 18 January.
    expect(ach("2027-01-16", "2027-01-15", "1015")).toEqual({ ok: true, value: "2027-01-19" });
  });

  it("settles a same-day entry (effective the day its file was created, before the last window) that day", () => {
    expect(ach("2026-12-03", "2026-12-03", "1015")).toEqual({ ok: true, value: "2026-12-03" });
  });

  it("settles a same-day entry of a file created after the last window on the next business day", () => {
    expect(ach("2026-12-04", "2026-12-04", "1700")).toEqual({ ok: true, value: "2026-12-07" });
  });

  it("settles a stale entry (effective before its file was created) as a same-day one of the file's day", () => {
    expect(ach("2026-11-30", "2026-12-03", "0900")).toEqual({ ok: true, value: "2026-12-03" });
  });

  it("rolls an entry without a file creation date from its effective date alone", () => {
    expect(ach("2026-12-06")).toEqual({ ok: true, value: "2026-12-07" });
  });

  it("refuses a date the calendars do not cover, never guessing", () => {
    expect(ach("1999-01-01")).toMatchObject({ ok: false, error: { code: "CALENDAR_DATE_OUT_OF_RANGE" } });
  });

  it("uses a card message's DE 15 as written, in the year nearest the decision", () => {
    const settled = cardSettlementDate({
      decisionDate: "2026-12-31", decisionTimeUtcHhmm: "1000", currency: "USD", de15: "0104",
    });
    expect(settled).toEqual({ ok: true, value: "2027-01-04" });
  });

  it("prefers DE 15 to the cut-over", () => {
    const settled = cardSettlementDate({
      decisionDate: "2026-12-03", decisionTimeUtcHhmm: "2330", currency: "USD", de15: "1203",
    });
    expect(settled).toEqual({ ok: true, value: "2026-12-03" });
  });

  it("settles a card message without DE 15 decided before the cut-over on its own business day", () => {
    const settled = cardSettlementDate({ decisionDate: "2026-12-04", decisionTimeUtcHhmm: "2059", currency: "USD" });
    expect(settled).toEqual({ ok: true, value: "2026-12-04" });
  });

  it("settles a card message without DE 15 decided at the cut-over on the next business day", () => {
    const settled = cardSettlementDate({ decisionDate: "2026-12-04", decisionTimeUtcHhmm: "2100", currency: "USD" });
    expect(settled).toEqual({ ok: true, value: "2026-12-07" });
  });

  it("refuses a DE 15 that is no date", () => {
    const settled = cardSettlementDate({
      decisionDate: "2026-12-04", decisionTimeUtcHhmm: "1000", currency: "USD", de15: "1340",
    });
    expect(settled).toMatchObject({ ok: false, error: { code: "CALENDAR_DATE_INVALID" } });
  });

  it("settles an HTTP payment accepted on a Saturday on the Monday of its currency's calendar", () => {
    expect(httpSettlementDate("2026-12-05", "USD")).toEqual({ ok: true, value: "2026-12-07" });
  });

  it("settles a euro payment accepted on Good Friday on TARGET2's next business day", () => {
    // Good Friday 2027 is 26 March; Easter Monday 29 March is closed too.
    expect(httpSettlementDate("2027-03-26", "EUR")).toEqual({ ok: true, value: "2027-03-30" });
  });

  it("settles a payment in a currency without a shipped calendar on the day of acceptance", () => {
    expect(httpSettlementDate("2026-12-05", "JPY")).toEqual({ ok: true, value: "2026-12-05" });
  });
});
