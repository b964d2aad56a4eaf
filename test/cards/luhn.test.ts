import { describe, expect, it } from "vitest";
import { luhnValid, withLuhnCheckDigit } from "../../src/cards/cards.ts";

describe("the Luhn check digit", () => {
  it("accepts a well-known valid test number and refuses it with one digit changed", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(luhnValid("79927398713")).toBe(true);
  });

  it("appends the digit that makes a body valid", () => {
    expect(withLuhnCheckDigit("411111111111111")).toBe("4111111111111111");
    expect(withLuhnCheckDigit("7992739871")).toBe("79927398713");
    for (let serial = 0; serial < 200; serial++) expect(luhnValid(withLuhnCheckDigit(`499999${String(serial).padStart(9, "0")}`))).toBe(true);
  });
});
