import { describe, expect, it } from "vitest";
import { judgeReturn, timeFrameOf } from "../../../src/protocols/ach/return-deadlines.ts";
import { date, shippedCalendar } from "../calendars/calendar-support.ts";

const fed = shippedCalendar("us-federal-reserve");

/** The deadline and verdict for a return of `reasonCode` settled `settled`, returned `returned`. */
function judged(reasonCode: string, settled: string, returned: string) {
  const answer = judgeReturn(fed, {
    reasonCode, settlementDate: date(settled), returnDate: date(returned),
  });
  if (!answer.ok) throw new Error(answer.error.message);
  const { value } = answer;
  return value.kind === "no-deadline"
    ? { kind: value.kind }
    : { kind: value.kind, deadline: value.deadline, timeFrame: value.timeFrame.name };
}

describe("return deadlines (NACHA time frames on the Federal Reserve calendar)", () => {
  it.each([
    // R01 settled Wednesday 24 Dec 2025: Christmas and the weekend do not count.
    ["R01", "2025-12-24", "2025-12-29", "timely", "2025-12-29", "two-banking-days"],
    ["R01", "2025-12-24", "2025-12-30", "late", "2025-12-29", "two-banking-days"],
    // R03 settled Thursday 3 July 2025: Independence Day and the weekend in between.
    ["R03", "2025-07-03", "2025-07-08", "timely", "2025-07-08", "two-banking-days"],
    ["R03", "2025-07-03", "2025-07-09", "late", "2025-07-08", "two-banking-days"],
    // R05 settled Monday 3 March 2025: the 60th day is Friday 2 May; the next banking day Monday.
    ["R05", "2025-03-03", "2025-05-05", "timely", "2025-05-05", "sixty-calendar-days"],
    ["R05", "2025-03-03", "2025-05-06", "late", "2025-05-05", "sixty-calendar-days"],
    // R10 settled Tuesday 25 March 2025: the 60th day is Saturday 24 May, Memorial Day follows.
    ["R10", "2025-03-25", "2025-05-27", "timely", "2025-05-27", "sixty-calendar-days"],
    ["R10", "2025-03-25", "2025-05-28", "late", "2025-05-27", "sixty-calendar-days"],
    ["R07", "2025-03-25", "2025-04-30", "timely", "2025-05-27", "sixty-calendar-days"],
    ["R11", "2025-03-25", "2025-05-28", "late", "2025-05-27", "sixty-calendar-days"],
    ["R51", "2025-03-25", "2025-05-27", "timely", "2025-05-27", "sixty-calendar-days"],
    // R29 is a corporate customer's: two banking days (decision 0094 on why not sixty days).
    ["R29", "2025-12-24", "2025-12-30", "late", "2025-12-29", "two-banking-days"],
    // R61 dishonored, counted from the return's settlement: New Year's Day in between.
    ["R61", "2025-12-24", "2026-01-02", "timely", "2026-01-02", "dishonored"],
    ["R69", "2025-12-24", "2026-01-05", "late", "2026-01-02", "dishonored"],
    // R71 contested, counted from the dishonored return's settlement.
    ["R71", "2025-12-31", "2026-01-05", "timely", "2026-01-05", "contested"],
    ["R77", "2025-12-31", "2026-01-06", "late", "2026-01-05", "contested"],
  ])("%s settled %s, returned %s: %s (deadline %s, %s)",
    (code, settled, returned, kind, deadline, timeFrame) => {
      expect(judged(code, settled, returned)).toEqual({ kind, deadline, timeFrame });
    });

  it("counts from a settlement on a weekend as from that day: the next banking days count", () => {
    expect(judged("R01", "2025-12-27", "2025-12-30"))
      .toEqual({ kind: "timely", deadline: "2025-12-30", timeFrame: "two-banking-days" });
  });

  it("holds no deadline for a return by the ACH Operator or one agreed between the banks", () => {
    expect(judged("R13", "2025-01-02", "2026-01-02")).toEqual({ kind: "no-deadline" });
    expect(judged("R06", "2025-01-02", "2026-01-02")).toEqual({ kind: "no-deadline" });
  });

  it("holds no deadline for a code in R01..R85 that NACHA does not assign", () => {
    expect(judged("R48", "2025-01-02", "2026-01-02")).toEqual({ kind: "no-deadline" });
  });

  it("refuses a code that is not a return reason code", () => {
    const answer = judgeReturn(fed, {
      reasonCode: "R99", settlementDate: date("2025-01-02"), returnDate: date("2025-01-02"),
    }, { line: 7 });
    expect(answer).toMatchObject({
      ok: false, error: { code: "ACH_RETURN_REASON_CODE_INVALID", position: { line: 7 } },
    });
  });

  it("gives the extended window to exactly the unauthorized and ineligible-item codes", () => {
    const extended = Array.from({ length: 85 }, (_, i) => `R${String(i + 1).padStart(2, "0")}`)
      .filter((code) => {
        const frame = timeFrameOf(code);
        return frame !== undefined && frame !== "none" && frame.name === "sixty-calendar-days";
      });
    expect(extended).toEqual(["R05", "R07", "R10", "R11", "R33", "R37", "R38", "R51", "R52", "R53"]);
  });
});
