import codesJson from "../../../protocols/nacha/codes.json" with { type: "json" };
import { assert } from "../../assert.ts";

export type EntryDirection = "credit" | "debit";
export type TransactionPurpose = "forward" | "prenote" | "zero-dollar" | "return";

export interface TransactionCodeInfo {
  account: string;
  direction: EntryDirection;
  purpose: TransactionPurpose;
}

export interface SecCodeInfo {
  addendaTypes: string[];
  addendaMax: number;
  directions: EntryDirection[];
  nameMandatory: boolean;
  purposes?: TransactionPurpose[];
  accounts?: string[];
}

const transactionCodes = new Map<string, TransactionCodeInfo>();
for (const [code, info] of Object.entries(codesJson.transactionCodes)) {
  assert(/^\d\d$/.test(code), `transaction code ${code} is two digits`);
  assert(info.direction === "credit" || info.direction === "debit", `transaction code ${code} direction`);
  assert(["forward", "prenote", "zero-dollar", "return"].includes(info.purpose), `transaction code ${code} purpose`);
  transactionCodes.set(code, { account: info.account, direction: info.direction, purpose: info.purpose as TransactionPurpose });
}

const secCodes = new Map<string, SecCodeInfo>();
for (const [code, info] of Object.entries(codesJson.standardEntryClassCodes) as [string, SecCodeInfo][]) {
  assert(/^[A-Z]{3}$/.test(code), `SEC code ${code} is three capitals`);
  assert(Number.isInteger(info.addendaMax) && info.addendaMax >= 0 && info.addendaMax <= 9_999, `SEC ${code} addendaMax 0..9999`);
  assert(info.addendaMax === 0 || info.addendaTypes.length > 0, `SEC ${code} names the addenda it allows`);
  secCodes.set(code, info);
}

const serviceClassCodes = new Map<string, EntryDirection[]>();
for (const [code, info] of Object.entries(codesJson.serviceClassCodes)) {
  serviceClassCodes.set(code, info.directions as EntryDirection[]);
}

const returnCodes = codesJson.returnReasonCodes;
assert(returnCodes.first >= 1 && returnCodes.last <= 99 && returnCodes.first < returnCodes.last, "return reason code range");
const dishonored = new Set(returnCodes.dishonored);
const contested = new Set(returnCodes.contested);
const changeCodes = new Set(Object.keys(codesJson.changeCodes));
export const iatMandatoryAddenda: readonly string[] = codesJson.iatAddenda.mandatory;
export const iatOptionalAddendaMax: Readonly<Record<string, number>> = codesJson.iatAddenda.optionalMax;

export function transactionCodeInfo(code: string): TransactionCodeInfo | undefined {
  return transactionCodes.get(code);
}

export function secCodeInfo(code: string): SecCodeInfo | undefined {
  return secCodes.get(code);
}

export function serviceClassDirections(code: string): EntryDirection[] | undefined {
  return serviceClassCodes.get(code);
}

/** "R01".."R85". */
export function isReturnReasonCode(code: string): boolean {
  const match = /^R(\d\d)$/.exec(code);
  if (!match?.[1]) return false;
  const n = Number(match[1]);
  return n >= returnCodes.first && n <= returnCodes.last;
}

export function returnForm(code: string): "dishonored" | "contested" | "return" {
  if (dishonored.has(code)) return "dishonored";
  if (contested.has(code)) return "contested";
  return "return";
}

export function isChangeCode(code: string): boolean {
  return changeCodes.has(code);
}
