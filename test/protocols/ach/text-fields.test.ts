import { describe, expect, it } from "vitest";
import { parseAch } from "../../../src/protocols/ach/reader.ts";
import { file, linesOf, setField } from "./support.ts";

/** base-valid.ach with one character replaced at a 1-based line and column. */
function withCharacter(lineNumber: number, column: number, character: string): Buffer {
  const lines = linesOf("base-valid.ach");
  lines[lineNumber - 1] = setField(lines[lineNumber - 1] ?? "", column, character);
  return file(lines);
}

describe("ACH reader: text PostgreSQL cannot store", () => {
  it("refuses a NUL byte in an entry's name as an entry error at its line, column and field", () => {
    const { summary } = parseAch(withCharacter(3, 58, "\u0000"));
    const found = summary.findings.filter((f) => f.code === "TEXT_CHARACTER_INVALID");
    expect(found).toEqual([expect.objectContaining({
      severity: "error", scope: "entry",
      position: expect.objectContaining({ line: 3, column: 58, field: "individualName" }),
      valueMasked: "ADA\\0LOVELACE          ",
    })]);
    expect(summary.rejectedEntryCount).toBe(1);
    // Not also called a Windows-1252 character: the one finding says what is wrong.
    expect(summary.findings.some((f) => f.code === "ACH_NON_ASCII_CHARACTER")).toBe(false);
  });

  it("refuses a NUL byte in a batch header's company id (part of every entry's natural key) and rejects the batch", () => {
    const { summary } = parseAch(withCharacter(2, 43, "\u0000"));
    expect(summary.findings.filter((f) => f.code === "TEXT_CHARACTER_INVALID")).toEqual([expect.objectContaining({
      severity: "error", position: expect.objectContaining({ line: 2, column: 43, field: "companyIdentification" }),
    })]);
    expect(summary.rejectedBatchCount).toBe(1);
  });

  it("still reads a Windows-1252 byte as a warning, not as unstorable text", () => {
    const { summary } = parseAch(withCharacter(3, 58, "\u00e9"));
    expect(summary.findings.map((f) => f.code)).toEqual(["ACH_NON_ASCII_CHARACTER"]);
  });
});
