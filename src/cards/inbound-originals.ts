import { isSourcePaused } from "../incidents/source-pause.ts";
import { gatewayAccounts, identityOf, naturalKeyOf, type MessageKind } from "../normalize/from-iso8583.ts";
import { currencyByNumeric } from "../protocols/iso4217/currency.ts";
import { de, textField, type Message } from "../protocols/iso8583/index.ts";
import { settlementDateOfMessage } from "./card-settlement-date.ts";
import { issuerOfPan } from "./cards.ts";
import { decideAlone, type PendingOriginal } from "./decide-originals.ts";
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";
import { messagePositionOf } from "./inbound-store.ts";
import { buildResponse, panOf } from "./messages.ts";
import { processingRuleOf } from "./processing-codes.ts";

/**
 * Originals (0100/0101, 0120/0121, 0200/0201, 0220/0221): the issuer side checks the format, routes
 * the card, turns the message into a canonical record (src/normalize/from-iso8583.ts) and hands it
 * to the decision (decide-originals.ts): through the endpoint's batching writer (group commit,
 * docs/decisions/0045), else alone as a batch of one. The record core claims the key, compares a
 * repeat's fingerprint, posts under the processing code's rule and records every repeat; the
 * channel's contract (the stored response, the RRN link, 94, 05, response codes) is this room's.
 */

function amountOf(message: Message, absentIsZero: boolean): { amountMinor: bigint; currency: string } | undefined {
  const amount = textField(message, de.amountTransaction) ?? (absentIsZero ? "0" : undefined);
  const currency = currencyByNumeric(textField(message, de.currencyCodeTransaction) ?? "");
  if (amount === undefined || !/^\d{1,12}$/.test(amount) || currency === undefined) return undefined;
  return { amountMinor: BigInt(amount), currency: currency.code };
}

export async function handleOriginal(deps: InboundDependencies, message: Message, context: InboundContext, kind: MessageKind): Promise<InboundResult> {
  const identity = identityOf(message);
  const rule = processingRuleOf(message, kind);
  // A balance inquiry may leave field 4 out: it asks, it moves nothing.
  const amount = amountOf(message, rule?.action === "balance");
  const pan = panOf(message);
  if (identity === undefined || pan === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  if (amount === undefined) return { response: buildResponse(message, "invalidAmount"), decision: "amount_or_currency_invalid" };
  const tenantId = await issuerOfPan(deps.pool, pan);
  if (tenantId === undefined) return { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" };
  // An operator stopped this tenant's card channel (incident): decide nothing, the scheme stands in.
  if (await isSourcePaused(deps.pool, tenantId, "iso8583")) return { response: buildResponse(message, "sourcePaused"), decision: "source_paused" };

  const { currency } = amount;
  const decidedAt = new Date();
  const settlementDate = settlementDateOfMessage(message, currency, decidedAt);
  const pending: PendingOriginal = {
    message, naturalKey: naturalKeyOf(identity),
    original: {
      tenantId, mti: message.mti, messageKind: kind, identity, retrievalReferenceNumber: textField(message, de.retrievalReferenceNumber),
      cardHash: deps.keys.cardHash(tenantId, pan), amountMinor: amount.amountMinor, currency,
      // The transaction type is part of what a message says (a refund is not a purchase).
      transactionType: (textField(message, de.processingCode) ?? "00").slice(0, 2), rule,
      gatewayAccounts: { holds: gatewayAccounts.holds(currency), scheme: gatewayAccounts.scheme(currency), suspense: gatewayAccounts.suspense(currency) },
      position: messagePositionOf(message), connection: context.connection,
      valueDate: decidedAt.toISOString().slice(0, 10),
      ...(settlementDate === undefined ? {} : { settlementDate }),
    },
  };
  // A balance inquiry reads the balance after its own decision: alone, so that no later message of a batch is in it.
  if (deps.originalsWriter !== undefined && rule?.action !== "balance") return deps.originalsWriter.submit(pending);
  return decideAlone(deps.pool, pending);
}
