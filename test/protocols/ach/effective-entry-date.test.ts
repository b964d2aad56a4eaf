import { describe, expect, it } from "vitest";
import { achEntryToCanonical } from "../../../src/normalize/from-ach.ts";
import { parseAch } from "../../../src/protocols/ach/reader.ts";
import { file, linesOf, setField } from "./support.ts";

// Issue 30 item 6: a blank effective entry date was an error (the batch rejected) while 000000
// was a warning. NACHA marks the field Required, not Mandatory: the ACH operator settles a batch
// whose date is blank, invalid or past on the next processing day (decision 0093).

const effectiveEntryDateColumn = 70;

/** base-valid.ach (file created 250304) with the batch header's effective entry date replaced. */
function withEffectiveEntryDate(value: string): Buffer {
  const lines = linesOf("base-valid.ach");
  lines[1] = setField(lines[1]!, effectiveEntryDateColumn, value);
  return file(lines);
}

function readWith(value: string) {
  const parsed = parseAch(withEffectiveEntryDate(value));
  const findings = parsed.summary.findings.map((found) => ({
    code: found.code, severity: found.severity, scope: found.scope, position: found.position,
  }));
  return { parsed, findings };
}

const warnedAtTheField = [{
  code: "ACH_DATE_INVALID", severity: "warning", scope: "batch",
  position: {
    line: 2, recordType: "5", field: "effectiveEntryDate", column: effectiveEntryDateColumn,
  },
}];

describe("the effective entry date of a batch", () => {
  it("is a warning when blank, and the batch is read", () => {
    const { parsed, findings } = readWith("      ");
    expect(findings).toEqual(warnedAtTheField);
    expect(parsed.batches[0]).toMatchObject({ rejected: false });
    expect(parsed.batches[0]?.entries).toHaveLength(3);
  });

  it("is the same warning when all zeros", () => {
    const { parsed, findings } = readWith("000000");
    expect(findings).toEqual(warnedAtTheField);
    expect(parsed.batches[0]).toMatchObject({ rejected: false });
  });

  it("is the same warning when an impossible date (month 13)", () => {
    const { parsed, findings } = readWith("251332");
    expect(findings).toEqual(warnedAtTheField);
    expect(parsed.batches[0]).toMatchObject({ rejected: false });
  });

  it("raises nothing when a valid date", () => {
    expect(readWith("250305").findings).toEqual([]);
  });

  it("gives blank, zero and impossible dates the same value date: the file creation date", () => {
    const valueDates = ["      ", "000000", "251332", "250305"].map((value) => {
      const { parsed } = readWith(value);
      const entry = parsed.batches[0]?.entries[0];
      if (entry === undefined || parsed.fileHeader === undefined) throw new Error("no entry read");
      const record = achEntryToCanonical(entry, { tenantId: "t1", fileHeader: parsed.fileHeader });
      return record.ok ? record.value.valueDate : record.error.code;
    });
    expect(valueDates).toEqual(["2025-03-04", "2025-03-04", "2025-03-04", "2025-03-05"]);
  });
});
