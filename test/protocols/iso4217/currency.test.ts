import { describe, expect, it } from "vitest";
import { currencyByNumeric, decimalToMinor, minorToDecimal } from "../../../src/protocols/iso4217/currency.ts";

describe("ISO 4217 amounts", () => {
  it("turns a decimal string into exact minor units by the currency's exponent", () => {
    expect(decimalToMinor("12.30", "USD")).toEqual({ ok: true, value: 1230n });
    expect(decimalToMinor("1500", "JPY")).toEqual({ ok: true, value: 1500n });
    expect(decimalToMinor("1.234", "BHD")).toEqual({ ok: true, value: 1234n });
    expect(decimalToMinor("0.07", "USD")).toEqual({ ok: true, value: 7n });
  });

  it("keeps digits a float would lose", () => {
    expect(decimalToMinor("90071992547409.93", "USD")).toEqual({ ok: true, value: 9007199254740993n });
  });

  it("refuses more decimals than the currency has, never rounding", () => {
    expect(decimalToMinor("1.005", "USD")).toMatchObject({ ok: false, error: { code: "AMOUNT_TOO_MANY_DECIMALS" } });
    expect(decimalToMinor("1.5", "JPY")).toMatchObject({ ok: false, error: { code: "AMOUNT_TOO_MANY_DECIMALS" } });
  });

  it("accepts trailing zeros beyond the exponent, which name the same amount", () => {
    expect(decimalToMinor("1.500", "USD")).toEqual({ ok: true, value: 150n });
  });

  it("refuses signs, exponents, spaces and unknown currencies", () => {
    for (const text of ["-1.00", "+1", "1e3", " 1", "1,00", ".5", ""]) expect(decimalToMinor(text, "USD").ok, text).toBe(false);
    expect(decimalToMinor("1.00", "XYZ")).toMatchObject({ ok: false, error: { code: "CURRENCY_UNKNOWN" } });
  });

  it("prints minor units back as a decimal string", () => {
    expect(minorToDecimal(1230n, "USD")).toBe("12.30");
    expect(minorToDecimal(5n, "USD")).toBe("0.05");
    expect(minorToDecimal(-5n, "USD")).toBe("-0.05");
    expect(minorToDecimal(1500n, "JPY")).toBe("1500");
  });

  it("finds a currency by the numeric code ISO 8583 field 49 carries", () => {
    expect(currencyByNumeric("840")?.code).toBe("USD");
  });
});
