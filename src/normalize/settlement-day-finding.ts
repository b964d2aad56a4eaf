import { calendarDateOf } from "../protocols/calendars/calendar-date.ts";
import type { Iso20022Finding } from "../protocols/iso20022/types.ts";
import type { CanonicalRecord } from "./canonical-record.ts";
import { calendarOfCurrency } from "./settlement-date.ts";

/**
 * A warning when a message's settlement date (IntrBkSttlmDt, as written: decision 0101) is a day
 * its currency's clearing system is closed (a TARGET2 closing day for EUR, a Federal Reserve
 * holiday or weekend for USD): the sender's system would not settle it on that day. A warning,
 * not a refusal: the date is the sender's, and the money still moves on the next open day.
 */
export function settlementDayFinding(
  record: Pick<CanonicalRecord, "settlementDate" | "currency">, xmlPath: string,
): Iso20022Finding | undefined {
  const calendar = calendarOfCurrency(record.currency);
  if (!calendar || record.settlementDate === undefined) return undefined;
  // A date outside the calendars' years is not judged here (the reader reports a bad date).
  const date = calendarDateOf(record.settlementDate);
  if (!date.ok || calendar.isBusinessDay(date.value)) return undefined;
  return {
    code: "ISO20022_SETTLEMENT_DAY_CLOSED", severity: "warning", scope: "transaction",
    message: `settlement date ${date.value} is not a business day of ${calendar.name} ` +
      `(${record.currency}): no settlement happens on it`,
    position: { xmlPath },
  };
}
