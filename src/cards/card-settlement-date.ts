import { cardSettlementDate } from "../normalize/settlement-date.ts";
import { de, textField, type Message } from "../protocols/iso8583/index.ts";

/**
 * The settlement date of a card message decided at `decidedAt` (docs/decisions/0101): its DE 15
 * when it carries one, else the scheme's cut-over on the currency's calendar. Undefined when the
 * date cannot be placed (a DE 15 that is no date): the transfer settles on its value date.
 */
export function settlementDateOfMessage(
  message: Message, currency: string, decidedAt: Date,
): string | undefined {
  const at = decidedAt.toISOString();
  const settlementDate = textField(message, de.dateSettlement);   // DE 15 Date, settlement (MMDD)
  const settled = cardSettlementDate({
    decisionDate: at.slice(0, 10), decisionTimeUtcHhmm: `${at.slice(11, 13)}${at.slice(14, 16)}`,
    currency, ...(settlementDate === undefined ? {} : { de15: settlementDate }),
  });
  return settled.ok ? settled.value : undefined;
}
