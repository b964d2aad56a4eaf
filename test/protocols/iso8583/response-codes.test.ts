import { describe, expect, it } from "vitest";
import { responseCode, responseCodes } from "../../../src/protocols/iso8583/index.ts";

describe("field 39 response codes", () => {
  it("give the meaning and outcome of the codes the gateway answers with", () => {
    expect(responseCode("00")).toEqual({ code: "00", meaning: "Approved or completed successfully", outcome: "approved" });
    expect(responseCode("51")).toMatchObject({ meaning: "Insufficient funds", outcome: "declined" });
    expect(responseCode("14")?.outcome).toBe("declined");
    expect(responseCode("15")?.meaning).toBe("No such issuer");
    expect(responseCode("30")).toMatchObject({ meaning: "Format error", outcome: "error" });
    expect(responseCode("94")?.meaning).toBe("Duplicate transmission");
    expect(responseCode("96")?.meaning).toBe("System malfunction");
  });

  it("hold 05, 12 and 13 among the declines", () => {
    for (const code of ["05", "12", "13"]) expect(responseCode(code)?.outcome).toBe("declined");
  });

  it("know nothing of a code outside the table", () => {
    expect(responseCode("ZZ")).toBeUndefined();
  });

  it("list each code once under its own key", () => {
    for (const [code, entry] of responseCodes) expect(entry.code).toBe(code);
  });
});
