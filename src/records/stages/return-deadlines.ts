import type { CanonicalRecord } from "../../normalize/canonical-record.ts";
import { judgeAchReturn, rolledToBankingDay } from "../../protocols/ach/return-deadlines.ts";
import type { CalendarDate } from "../../protocols/calendars/index.ts";
import type { OriginalRow } from "../store/keys.ts";

/** Why a return came after its deadline, for its review item; the deadline it missed. */
export interface LateReturn {
  deadline: CalendarDate;
  detail: string;
}

/**
 * Whether an ACH return of `original` came after NACHA's deadline for its reason code
 * (docs/decisions/0094). The original's settlement date is not kept, so its effective entry date
 * rolled to a banking day stands for it; the return's own effective entry date, rolled the same
 * way, is its date. Only a plain return is judged: a dishonored or contested one counts from a
 * return's settlement, which the link to a forward entry does not give. A date the calendar
 * does not cover leaves the return undecided here: it is applied as before.
 */
export function lateReturnOf(
  record: CanonicalRecord, original: OriginalRow,
): LateReturn | undefined {
  const reasonCode = record.attributes.reasonCode;
  if (record.channel !== "ach" || record.kind !== "return" || reasonCode === undefined) {
    return undefined;
  }
  const judged = judgeAchReturn({
    reasonCode, originalEffectiveDate: original.value_date, returnDate: record.valueDate,
  });
  if (judged?.kind !== "late") return undefined;
  const { deadline, timeFrame } = judged;
  const settlement = rolledToBankingDay(original.value_date);
  const returned = rolledToBankingDay(record.valueDate);
  const detail = `late return: ${reasonCode} dated ${returned} missed its deadline ${deadline}`
    + ` (${timeFrame.name} from the original ${original.natural_key}'s settlement ${settlement}:`
    + ` ${timeFrame.rule}); held for a person to accept or refuse`;
  return { deadline, detail };
}
