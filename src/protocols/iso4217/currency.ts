import table from "../../../protocols/iso4217/currencies.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import type { Position } from "../../errors/position.ts";
import { limits } from "../../config/limits.ts";

export interface Currency {
  code: string;      // ISO 4217 alphabetic, e.g. "USD"
  numeric: string;   // ISO 4217 numeric, e.g. "840" (ISO 8583 field 49 carries this)
  exponent: number;  // digits after the decimal point in the minor unit
}

const byCode = new Map<string, Currency>();
const byNumeric = new Map<string, Currency>();
for (const [code, entry] of Object.entries(table.currencies)) {
  assert(/^[A-Z]{3}$/.test(code), `currency code ${code} is three capitals`);
  assert(/^\d{3}$/.test(entry.numeric), `currency ${code} numeric code is three digits`);
  assert(Number.isInteger(entry.exponent) && entry.exponent >= 0 && entry.exponent <= 4, `currency ${code} exponent 0..4`);
  const currency = { code, numeric: entry.numeric, exponent: entry.exponent };
  byCode.set(code, currency);
  byNumeric.set(entry.numeric, currency);
}

export function currencyByCode(code: string): Currency | undefined {
  return byCode.get(code);
}

export function currencyByNumeric(numeric: string): Currency | undefined {
  return byNumeric.get(numeric);
}

const decimalPattern = /^(\d+)(?:\.(\d+))?$/;

/**
 * "12.30" USD -> 1230n. Exact: no float on the way. More decimals than the currency allows is
 * an error, never a rounding (trailing zeros beyond the exponent are accepted: "1.500" JPY is
 * not, "1.50" USD is, "1.500" USD is, since it names the same amount exactly).
 */
export function decimalToMinor(text: string, currencyCode: string, position: Position = {}): Result<bigint, Finding> {
  const currency = byCode.get(currencyCode);
  if (!currency) return fail(finding("CURRENCY_UNKNOWN", `unknown currency ${JSON.stringify(currencyCode)}`, position));
  const match = decimalPattern.exec(text);
  if (!match) return fail(finding("AMOUNT_INVALID", `amount ${JSON.stringify(text.slice(0, 40))} is not a plain decimal`, position));
  const whole = match[1] ?? "0";
  let fraction = match[2] ?? "";
  if (fraction.length > currency.exponent) {
    const excess = fraction.slice(currency.exponent);
    if (/[^0]/.test(excess)) {
      return fail(finding("AMOUNT_TOO_MANY_DECIMALS", `amount ${text} has more than ${currency.exponent} decimals for ${currency.code}`, position));
    }
    fraction = fraction.slice(0, currency.exponent);
  }
  if (whole.length > 20) return fail(finding("AMOUNT_TOO_LARGE", `amount ${text.slice(0, 40)} is too large`, position));
  const minor = BigInt(whole + fraction.padEnd(currency.exponent, "0"));
  if (minor > limits.ledger.amountMinorMax) return fail(finding("AMOUNT_TOO_LARGE", `amount ${text} exceeds the largest accepted amount`, position));
  return ok(minor);
}

/** 1230n USD -> "12.30". */
export function minorToDecimal(amountMinor: bigint, currencyCode: string): string {
  const currency = byCode.get(currencyCode);
  assert(currency, `currency ${currencyCode} is known`);
  const negative = amountMinor < 0n;
  const digits = (negative ? -amountMinor : amountMinor).toString().padStart(currency.exponent + 1, "0");
  const whole = digits.slice(0, digits.length - currency.exponent);
  const fraction = digits.slice(digits.length - currency.exponent);
  return `${negative ? "-" : ""}${whole}${currency.exponent > 0 ? "." + fraction : ""}`;
}
