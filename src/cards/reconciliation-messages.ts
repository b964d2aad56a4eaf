import { isSourcePaused } from "../incidents/source-pause.ts";
import { currencyByNumeric } from "../protocols/iso4217/currency.ts";
import { de, replayedResponse, textField, type FieldValue, type Message } from "../protocols/iso8583/index.ts";
import { reconcileSchemeTotals } from "../recon/scheme-reconciliation.ts";
import { settlementDateOf, type SettlementTotals, type TotalsCategory } from "../recon/scheme-totals.ts";
import { institutionCode, mtiClassOf, naturalKeyOf } from "../normalize/from-iso8583.ts";
import { binDigits, issuerTenantOf } from "./cards.ts";
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";
import { settledCardRecords } from "./inbound-store.ts";
import { buildResponse } from "./messages.ts";

/**
 * ISO 8583 reconciliation messages (0500 request, 0520 advice; their repeats) on the issuer side:
 * reads the totals out of the fields, routes the tenant, and leaves the comparison to
 * src/recon/scheme-reconciliation.ts. The answer (0510, 0530) carries field 66, the settlement
 * code: 1 in balance, 2 out of balance, with field 39 00 (the totals were received and compared).
 */

// Fields 74-77 (counts) and 86-89 (amounts) of ISO 8583:1987, by category.
const countField: Readonly<Record<TotalsCategory, number>> = {
  credits: de.creditsNumber, creditReversals: de.creditsReversalNumber,
  debits: de.debitsNumber, debitReversals: de.debitsReversalNumber,
};
const amountField: Readonly<Record<TotalsCategory, number>> = {
  credits: de.creditsAmount, creditReversals: de.creditsReversalAmount,
  debits: de.debitsAmount, debitReversals: de.debitsReversalAmount,
};

/** The totals as the message states them; undefined when one is missing or not digits. */
export function totalsOfMessage(message: Message): SettlementTotals | undefined {
  const totals: Partial<SettlementTotals> = {};
  for (const category of Object.keys(countField) as TotalsCategory[]) {
    const count = textField(message, countField[category]);
    const amount = textField(message, amountField[category]);
    if (count === undefined || amount === undefined || !/^\d+$/.test(count) || !/^\d+$/.test(amount)) return undefined;
    totals[category] = { count: Number(count), amountMinor: BigInt(amount) };
  }
  // Field 97, net settlement amount: C (credit) or D (debit) then 16 digits; optional.
  const net = textField(message, de.amountNetSettlement);
  if (net !== undefined) {
    if (!/^[CD]\d+$/.test(net)) return undefined;
    totals.netMinor = (net[0] === "C" ? 1n : -1n) * BigInt(net.slice(1));
  }
  return totals as SettlementTotals;
}

/**
 * A reconciliation message names no card; it is routed as an authorization is, by the issuer's
 * BIN, read from field 100 (receiving institution identification code: us, the issuer).
 */
export async function handleReconciliation(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  const stan = textField(message, de.systemTraceAuditNumber);
  const transmission = textField(message, de.transmissionDateTime);
  const settlementDate = settlementDateOf(textField(message, de.dateSettlement) ?? "", new Date());
  const currency = currencyByNumeric(textField(message, de.currencyCodeSettlement) ?? "");
  const theirs = totalsOfMessage(message);
  const receiving = textField(message, de.receivingInstitutionIdentificationCode);
  if (stan === undefined || transmission === undefined || settlementDate === undefined || currency === undefined || theirs === undefined || receiving === undefined) {
    return { response: buildResponse(message, "formatError"), decision: "reconciliation_field_invalid" };
  }
  const tenantId = await issuerTenantOf(deps.pool, receiving.replace(/^0+(?=\d{6})/, "").slice(0, binDigits));
  if (tenantId === undefined) return { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" };
  if (await isSourcePaused(deps.pool, tenantId, "iso8583")) return { response: buildResponse(message, "sourcePaused"), decision: "source_paused", tenantId };

  // The acquirer and forwarding institutions when present, else the settlement institution (99).
  const acquirer = textField(message, de.acquiringInstitutionIdentificationCode)
    ?? textField(message, de.settlementInstitutionIdentificationCode);
  const forwarding = textField(message, de.forwardingInstitutionIdentificationCode);
  const naturalKey = naturalKeyOf({
    mtiClass: mtiClassOf(message.mti), acquirer: institutionCode(acquirer), forwarding: institutionCode(forwarding), stan, transmission,
  });
  const isAdvice = message.mti[2] === "2";
  const totals = {
    tenantId, naturalKey, mti: message.mti, settlementDate, currency: currency.code, theirs,
    connection: context.connection,
  };
  const outcome = await reconcileSchemeTotals(deps.pool, totals, settledCardRecords,
    (code) => buildResponse(message, isAdvice ? "acknowledged" : "approved", { [de.settlementCode]: code }));
  const response = outcome.repeated ? replayedResponse(outcome.response.mti, outcome.response.fields as Record<string, FieldValue>, message) : (outcome.response as Message);
  const decision = `${outcome.settlementCode === "1" ? "in_balance" : "out_of_balance"}${outcome.repeated ? "_repeat" : ""}`;
  return { response, decision, tenantId, naturalKey };
}
