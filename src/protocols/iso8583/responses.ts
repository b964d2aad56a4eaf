import responseEcho from "../../../protocols/iso8583/response-echo.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { de } from "./data-elements.ts";
import { alwaysSensitiveFields } from "./masking.ts";
import type { FieldValue, Message } from "./types.ts";

/**
 * Responses by the rules of ISO 8583:1987: the response MTI of a request, the fields a response
 * echoes from its request (data in protocols/iso8583/response-echo.json), a stored response
 * answered to a repeat, and what of a response may be stored. Which response code a decision is
 * answered with is the card channel's (src/cards/messages.ts). Pure: no database, no socket.
 */

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

/** Requests (0) and advices (2): what the issuer can decide; any other answered MTI gets 30. */
export function isRequestOrAdvice(mti: string): boolean {
  return /^\d\d[02]\d$/.test(mti);
}

// What a response echoes of its request, by message class (protocols/iso8583/response-echo.json).
const echoedFields: Readonly<Record<string, readonly number[]>> = responseEcho.byMessageClass;
const formatErrorEchoedFields: readonly number[] = responseEcho.formatError;
for (const fields of [...Object.values(echoedFields), formatErrorEchoedFields]) {
  const areDataElements = fields.every((n) => Number.isInteger(n) && n >= 2 && n <= 128);
  assert(areDataElements, "echoed fields are data element numbers 2..128");
}

/**
 * The response to `request` with `responseCode` in DE 39: the fields its message class echoes (a
 * message class without an echo rule, and a format error, echo the few fields a sender needs to
 * match the answer), then `extra`.
 */
export function responseOf(
  request: Message,
  responseCode: string,
  extra: Record<number, FieldValue>,
  echo: "messageClass" | "formatError",
): Message {
  const byClass = echoedFields[request.mti.slice(0, 2)] ?? formatErrorEchoedFields;
  const fields: Record<number, FieldValue> = {};
  for (const fieldNumber of echo === "formatError" ? formatErrorEchoedFields : byClass) {
    const value = request.fields[fieldNumber];
    if (value !== undefined) fields[fieldNumber] = value;
  }
  Object.assign(fields, extra);
  fields[de.responseCode] = responseCode;
  return { mti: responseMtiOf(request.mti), fields };
}

/** Stored responses drop card data; field 2 is echoed again from the repeat being answered. */
export function storableFields(message: Message): Record<string, FieldValue> {
  const stored: Record<string, FieldValue> = {};
  for (const [key, value] of Object.entries(message.fields)) {
    if (alwaysSensitiveFields[Number(key)] === undefined) stored[key] = value;
  }
  return stored;
}

/**
 * The stored decision answered to THIS request: the stored fields (response code, authorization
 * id...), with every field the response echoes taken from the request being answered. A repeat
 * carries the same echoed fields as its original, so it reads the same; a second reversal of one
 * original under a new STAN gets its own STAN back, or the acquirer could never match it
 * (regression: found by the seeded simulation, seed 3 step 7). Field 2 is never stored.
 */
export function replayedResponse(
  mti: string, storedFields: Record<string, FieldValue>, request: Message,
): Message {
  const fields: Record<number, FieldValue> = {};
  for (const [key, value] of Object.entries(storedFields)) fields[Number(key)] = value;
  for (const fieldNumber of echoedFields[request.mti.slice(0, 2)] ?? []) {
    const value = request.fields[fieldNumber];
    if (value !== undefined) fields[fieldNumber] = value;
  }
  return { mti, fields };
}
