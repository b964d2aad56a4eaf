import table from "../../../protocols/iso8583/response-codes.json" with { type: "json" };
import { assert } from "../../assert.ts";

/** DE 39 response codes, read from protocols/iso8583/response-codes.json. */
export type ResponseOutcome = "approved" | "declined" | "error";

export interface ResponseCode {
  code: string;      // two characters, e.g. "51"
  meaning: string;   // e.g. "Insufficient funds"
  outcome: ResponseOutcome;
}

const outcomes: readonly string[] = ["approved", "declined", "error"];
const byCode = new Map<string, ResponseCode>();
for (const [code, entry] of Object.entries(table.codes)) {
  assert(/^[0-9A-Z]{2}$/.test(code), `response code ${code} is two characters`);
  assert(entry.meaning.length > 0, `response code ${code} has a meaning`);
  assert(outcomes.includes(entry.outcome), `response code ${code} outcome is approved, declined or error`);
  byCode.set(code, { code, meaning: entry.meaning, outcome: entry.outcome as ResponseOutcome });
}

export const responseCodes: ReadonlyMap<string, ResponseCode> = byCode;

export function responseCode(code: string): ResponseCode | undefined {
  return byCode.get(code);
}
