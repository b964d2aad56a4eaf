import { assert } from "../assert.ts";
import type { MessageKind, ProcessingAccount, ProcessingRule } from "../normalize/from-iso8583.ts";
import { de, responseCode, textField, type Message } from "../protocols/iso8583/index.ts";
import processingCodesJson from "../../protocols/iso8583/processing-codes.json" with { type: "json" };

/**
 * What a processing code (DE 3, positions 1-2) does per message kind, as data in
 * protocols/iso8583/processing-codes.json (docs/decisions/0028). Pure: no database, no socket.
 */
export type { MessageKind, ProcessingRule } from "../normalize/from-iso8583.ts";

export interface ProcessingCode {
  code: string;        // positions 1-2
  name: string;
  byKind: Partial<Record<MessageKind, ProcessingRule>>;
}

const KINDS: readonly MessageKind[] = ["authorization", "authorizationAdvice", "financial", "financialAdvice"];
const ACCOUNTS = new Set<string>(["customer", "holds", "scheme"]);

interface ProcessingCodesFile {
  unsupportedResponse: string;
  codes: Record<string, Record<string, unknown>>;
}

function loadRule(raw: unknown, where: string): ProcessingRule {
  assert(typeof raw === "object" && raw !== null, `${where} is an object`);
  const rule = raw as Record<string, unknown>;
  if (rule.action === "approve" || rule.action === "balance") return { action: rule.action };
  assert(rule.action === "post", `${where} action is post, approve or balance`);
  const { kind, debit, credit } = rule;
  assert(typeof kind === "string" && kind.length > 0, `${where} names its transfer kind`);
  assert(typeof debit === "string" && ACCOUNTS.has(debit) && typeof credit === "string" && ACCOUNTS.has(credit), `${where} debits and credits customer, holds or scheme`);
  assert(debit !== credit, `${where} moves money between two different accounts`);
  assert(debit === "customer" || credit === "customer", `${where} moves money on the card's account`);
  return { action: "post", kind, debit: debit as ProcessingAccount, credit: credit as ProcessingAccount };
}

/** Loads and checks the table: a malformed entry is a bug in our data, so it asserts. */
export function loadProcessingCodes(file: ProcessingCodesFile): { codes: Map<string, ProcessingCode>; unsupportedResponse: string } {
  assert(responseCode(file.unsupportedResponse) !== undefined, "unsupportedResponse is a code of the response-code table");
  const codes = new Map<string, ProcessingCode>();
  for (const [code, raw] of Object.entries(file.codes)) {
    assert(/^\d\d$/.test(code), `processing code ${code} is two digits`);
    assert(typeof raw.name === "string", `processing code ${code} has a name`);
    const byKind: ProcessingCode["byKind"] = {};
    for (const kind of KINDS) if (raw[kind] !== undefined) byKind[kind] = loadRule(raw[kind], `processing code ${code} ${kind}`);
    codes.set(code, { code, name: raw.name, byKind });
  }
  return { codes, unsupportedResponse: file.unsupportedResponse };
}

const table = loadProcessingCodes(processingCodesJson);
export const unsupportedProcessingResponse = table.unsupportedResponse;

/** Field 3 as sent; an absent field 3 is a purchase from the default account (as before this table). */
export function processingCodeOf(message: Message): string {
  return textField(message, de.processingCode) ?? "000000";
}

/** The rule for this message, or undefined: the code (or this kind of message with it) is not served. */
export function processingRuleOf(message: Message, kind: MessageKind, codes = table.codes): ProcessingRule | undefined {
  const code = processingCodeOf(message);
  if (!/^\d{6}$/.test(code)) return undefined;
  return codes.get(code.slice(0, 2))?.byKind[kind];
}

/**
 * One additional amount of field 54 (ISO 8583:1987): account type n2 (DE 3 positions 3-4), amount
 * type n2 ("02" available balance), currency n3, sign C/D and 12 digits of minor units.
 */
export function availableBalanceAmount(message: Message, currencyNumeric: string, balanceMinor: bigint): string {
  const accountType = processingCodeOf(message).slice(2, 4).padEnd(2, "0");
  const sign = balanceMinor < 0n ? "D" : "C";
  const magnitude = (balanceMinor < 0n ? -balanceMinor : balanceMinor).toString();
  assert(magnitude.length <= 12, "a balance fits field 54's twelve digits");
  return `${accountType}02${currencyNumeric}${sign}${magnitude.padStart(12, "0")}`;
}
