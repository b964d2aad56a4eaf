import { createHash } from "node:crypto";
import { assert } from "../assert.ts";
import {
  de, responseCode, responseOf, textField, type FieldValue, type Message,
} from "../protocols/iso8583/index.ts";
import { unsupportedProcessingResponse } from "./processing-codes.ts";

/**
 * What the card channel reads from and writes into ISO 8583 messages beyond the standard's own
 * rules (src/protocols/iso8583/responses.ts): the codes its decisions are answered with, the card
 * number a message carries, the authorization id. The key rules (natural key, fingerprint) are
 * the normalizer's (src/normalize/from-iso8583.ts). Pure: no database, no socket.
 */

/** The PAN from field 2, else from the start of track 2 (35). */
export function panOf(message: Message): string | undefined {
  const pan = textField(message, de.primaryAccountNumber);
  if (pan !== undefined) return pan;
  const track2 = textField(message, de.track2Data);
  const match = track2 === undefined ? null : /^;?(\d{12,19})[=D]/.exec(track2);
  return match?.[1];
}

/** The response to `request` for a decision: what its class echoes, `extra`, the DE 39 code. */
export function buildResponse(
  request: Message, code: ResponseCodeName, extra: Record<number, FieldValue> = {},
): Message {
  const echo = code === "formatError" ? "formatError" : "messageClass";
  return responseOf(request, decisionCodes[code], extra, echo);
}

// What the card channel decides, and the DE 39 code each decision is answered with (the meanings
// live in protocols/iso8583/response-codes.json; every code used here is checked to be there).
export const decisionCodes = {
  approved: "00",
  acknowledged: "00",              // advices, reversals (applied, nothing to reverse, or orphan), network management
  insufficientFunds: "51",
  unknownCard: "14",
  unknownIssuer: "15",
  invalidTransaction: "12",        // a currency this issuer does not serve on the card's account
  unsupportedProcessingCode: unsupportedProcessingResponse, // DE 3 not in protocols/iso8583/processing-codes.json (12)
  invalidAmount: "13",
  refusedAfterReversal: "05",      // the original arrived after its reversal: never held
  duplicateTransmission: "94",     // same natural key, different amount or card
  originalNotFound: "25",          // a reversal without a PAN whose original is unknown here
  formatError: "30",
  sourcePaused: "91",              // an operator stopped this tenant's card channel (incident): the scheme stands in
  signOnRequired: "91",            // a financial message before the link signed on: issuer unavailable, the scheme stands in
  systemMalfunction: "96",
} as const;
export type ResponseCodeName = keyof typeof decisionCodes;
for (const [name, code] of Object.entries(decisionCodes)) assert(responseCode(code) !== undefined, `decision ${name} answers with a code of the response-code table`);

/** A deterministic six-character authorization id (DE 38) from the transaction's key. */
export function approvalCodeOf(naturalKey: string): string {
  return createHash("sha256").update(naturalKey).digest("hex").slice(0, 6).toUpperCase();
}
