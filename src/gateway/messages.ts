import { createHash } from "node:crypto";
import { assert } from "../assert.ts";
import { institutionCode } from "../normalize/from-iso8583.ts";
import { alwaysSensitiveFields, responseCode, type FieldValue, type Message, type Subfields } from "../protocols/iso8583/index.ts";
import responseEcho from "../../protocols/iso8583/response-echo.json" with { type: "json" };
import { unsupportedProcessingResponse } from "./processing-codes.ts";

/**
 * What the gateway reads from and writes into ISO 8583 messages: the response MTI, the fields a
 * response echoes, the codes its decisions map to. The key rules (natural key, fingerprint) are
 * the normalizer's (src/normalize/from-iso8583.ts). Pure: no database, no socket.
 */

/** Field value as text; undefined when absent or not a plain text field. */
export function textField(message: Message, fieldNumber: number): string | undefined {
  const value = message.fields[fieldNumber];
  return typeof value === "string" ? value : undefined;
}

export function isRepeatMti(mti: string): boolean {
  return mti[3] === "1" || mti[3] === "3";
}

/**
 * The MTI's third digit (its function) decides whether a message is answered, and under which
 * MTI (docs/decisions/0064). Requests (0), advices (2) and instructions (6) are answered under
 * the next digit; the functions ISO reserves (8, 9) under a request response (1), so a readable
 * MTI such as 9999 is answered 30 rather than left to the sender's timeout. Responses and
 * acknowledgements (1, 3, 5, 7) and notifications (4) are never answered: every answer this
 * endpoint sends has one of those functions, so two endpoints never answer each other's answers.
 */
const responseFunctionOf: Readonly<Record<string, string>> = {
  0: "1", 2: "3", 6: "7", 8: "1", 9: "1",
};

/** The answer's MTI, origin digit cleared: 0100 and 0101 -> 0110, 0420 -> 0430, 9999 -> 9910. */
export function responseMtiOf(mti: string): string {
  const responseFunction = responseFunctionOf[mti[2] ?? ""];
  assert(/^\d{4}$/.test(mti) && responseFunction !== undefined, `MTI ${mti} is answered`);
  return `${mti.slice(0, 2)}${responseFunction}0`;
}

/** Whether a message with this MTI is answered: see responseFunctionOf. */
export function expectsResponse(mti: string): boolean {
  return /^\d{4}$/.test(mti) && responseFunctionOf[mti[2] as string] !== undefined;
}

/** Requests (function 0) and advices (2): what this endpoint can decide; any other answered MTI gets 30. */
export function isRequestOrAdvice(mti: string): boolean {
  return /^\d\d[02]\d$/.test(mti);
}

/** Field 90 for a reversal of `original` (the original MTI, 11, 7, 32 and 33). */
export function originalDataElements(original: Message): Subfields {
  return {
    originalMessageTypeIdentifier: original.mti,
    originalSystemTraceAuditNumber: textField(original, 11) ?? "000000",
    originalTransmissionDateTime: textField(original, 7) ?? "0000000000",
    originalAcquiringInstitutionIdentificationCode: institutionCode(textField(original, 32)),
    originalForwardingInstitutionIdentificationCode: institutionCode(textField(original, 33)),
  };
}

/** The PAN from field 2, else from the start of track 2 (35). */
export function panOf(message: Message): string | undefined {
  const pan = textField(message, 2);
  if (pan !== undefined) return pan;
  const track2 = textField(message, 35);
  const match = track2 === undefined ? null : /^;?(\d{12,19})[=D]/.exec(track2);
  return match?.[1];
}

// Fields a response echoes from its request, by message class: data in protocols/iso8583/response-echo.json.
const echoedFields: Readonly<Record<string, readonly number[]>> = responseEcho.byMessageClass;
const formatErrorEchoedFields: readonly number[] = responseEcho.formatError;
for (const fields of [...Object.values(echoedFields), formatErrorEchoedFields]) {
  assert(fields.every((n) => Number.isInteger(n) && n >= 2 && n <= 128), "echoed fields are data element numbers 2..128");
}

export function buildResponse(request: Message, code: ResponseCodeName, extra: Record<number, FieldValue> = {}): Message {
  const responseCodeValue = decisionCodes[code];
  const echo = echoedFields[request.mti.slice(0, 2)] ?? formatErrorEchoedFields;
  const fields: Record<number, FieldValue> = {};
  for (const fieldNumber of code === "formatError" ? formatErrorEchoedFields : echo) {
    const value = request.fields[fieldNumber];
    if (value !== undefined) fields[fieldNumber] = value;
  }
  Object.assign(fields, extra);
  fields[39] = responseCodeValue;
  return { mti: responseMtiOf(request.mti), fields };
}

// What the gateway decides, and the DE 39 code each decision is answered with (the meanings live
// in protocols/iso8583/response-codes.json; every code used here is checked to be there).
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

/** Stored responses drop card data; field 2 is echoed again from the repeat that is being answered. */
export function storableFields(message: Message): Record<string, FieldValue> {
  const stored: Record<string, FieldValue> = {};
  for (const [key, value] of Object.entries(message.fields)) if (alwaysSensitiveFields[Number(key)] === undefined) stored[key] = value;
  return stored;
}

/**
 * The stored decision answered to THIS request: the stored fields (response code, authorization
 * id...), with every field the response echoes taken from the request being answered. A repeat
 * carries the same echoed fields as its original, so it reads the same; a second reversal of one
 * original under a new STAN gets its own STAN back, or the acquirer could never match it
 * (regression: found by the seeded simulation, seed 3 step 7). Field 2 is never stored.
 */
export function replayedResponse(mti: string, storedFields: Record<string, FieldValue>, request: Message): Message {
  const fields: Record<number, FieldValue> = {};
  for (const [key, value] of Object.entries(storedFields)) fields[Number(key)] = value;
  for (const fieldNumber of echoedFields[request.mti.slice(0, 2)] ?? []) {
    const value = request.fields[fieldNumber];
    if (value !== undefined) fields[fieldNumber] = value;
  }
  return { mti, fields };
}

/** A deterministic six-character authorization id (DE 38) from the transaction's key. */
export function authorizationIdOf(naturalKey: string): string {
  return createHash("sha256").update(naturalKey).digest("hex").slice(0, 6).toUpperCase();
}
