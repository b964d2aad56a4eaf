import { describe, expect, it } from "vitest";
import { parseAch } from "../../../src/protocols/ach/reader.ts";
import { routingCheckDigit } from "../../../src/protocols/ach/routing.ts";
import { codesAt, file, linesOf, setField } from "./support.ts";

// base-valid.ach: 1 file header, 2 batch header (PPD 200), 3-5 entries (22, 27, 22), 6 batch control, 7 file control, 8-10 padding.
const base = () => linesOf("base-valid.ach");
const errorsOf = (lines: string[]) => codesAt(parseAch(file(lines)).summary.findings);

describe("ACH validator: file rules", () => {
  it("computes the routing check digit with weights 3 7 1 3 7 1 3 7", () => {
    expect(routingCheckDigit("23138010")).toBe("4");
    expect(routingCheckDigit("12104288")).toBe("2");
    expect(routingCheckDigit("0910001X")).toBeUndefined();
  });

  it("rejects a file ID modifier that is not A-Z or 0-9", () => {
    const lines = base();
    lines[0] = setField(lines[0]!, 34, "a");
    expect(errorsOf(lines)).toEqual(["ACH_FILE_ID_MODIFIER_INVALID@1"]);
  });

  it("rejects a record size other than 094 and a blocking factor other than 10", () => {
    const lines = base();
    lines[0] = setField(lines[0]!, 35, "09510");
    expect(errorsOf(lines)).toEqual(["ACH_FIELD_VALUE_INVALID@1"]);
    lines[0] = setField(lines[0]!, 35, "09420");
    expect(errorsOf(lines)).toEqual(["ACH_FIELD_VALUE_INVALID@1"]);
  });

  it("compares the file control's batch count as read", () => {
    const lines = base();
    lines[6] = setField(lines[6]!, 2, "000002");
    expect(errorsOf(lines)).toEqual(["ACH_FILE_BATCH_COUNT_MISMATCH@7"]);
  });

  it("compares the file control's entry/addenda count as read", () => {
    const lines = base();
    lines[6] = setField(lines[6]!, 14, "00000004");
    expect(errorsOf(lines)).toEqual(["ACH_FILE_ENTRY_ADDENDA_COUNT_MISMATCH@7"]);
  });

  it("compares the file control's credit total as read", () => {
    const lines = base();
    lines[6] = setField(lines[6]!, 44, "000000000001");
    expect(errorsOf(lines)).toEqual(["ACH_FILE_TOTAL_CREDIT_MISMATCH@7"]);
  });

  it("rejects a record after the file control, and padding that is not all nines", () => {
    const lines = base();
    lines[7] = lines[4]!;
    lines[8] = "9".repeat(93) + "8";
    expect(errorsOf(lines)).toEqual(["ACH_RECORD_AFTER_FILE_CONTROL@8", "ACH_PADDING_INVALID@9"]);
  });

  it("rejects an unknown record type", () => {
    const lines = base();
    lines.splice(3, 0, "4" + " ".repeat(93));
    expect(errorsOf(lines)).toContain("ACH_RECORD_TYPE_UNKNOWN@4");
  });

  it("warns when 9-filled padding to a multiple of ten records is missing", () => {
    const { summary } = parseAch(file(base().slice(0, 7)));
    expect(summary.errorCount).toBe(0);
    expect(codesAt(summary.findings, "warning")).toEqual(["ACH_BLOCK_PADDING_MISSING@7"]);
  });

  it("reports a batch that is never closed and a file that never ends", () => {
    expect(errorsOf(base().slice(0, 5))).toEqual(["ACH_BATCH_CONTROL_MISSING@5", "ACH_FILE_CONTROL_MISSING@5"]);
  });
});

describe("ACH validator: batch rules", () => {
  it("rejects a credit in a debits-only batch (service class 225)", () => {
    const lines = base();
    lines[1] = setField(lines[1]!, 2, "225");
    lines[5] = setField(lines[5]!, 2, "225");
    expect(errorsOf(lines)).toEqual(["ACH_SERVICE_CLASS_ENTRY_MISMATCH@3", "ACH_SERVICE_CLASS_ENTRY_MISMATCH@5"]);
  });

  it("rejects an unknown SEC code and an unknown service class code", () => {
    const lines = base();
    lines[1] = setField(setField(lines[1]!, 51, "XYZ"), 2, "201");
    lines[5] = setField(lines[5]!, 2, "201");
    expect(errorsOf(lines)).toEqual(["ACH_SERVICE_CLASS_CODE_INVALID@2", "ACH_SEC_CODE_UNKNOWN@2"]);
  });

  it("compares company identifications trimmed: a right-justified control is not a mismatch", () => {
    const lines = base();
    lines[5] = setField(lines[5]!, 45, " 123456789");
    lines[1] = setField(lines[1]!, 41, "123456789 ");
    expect(errorsOf(lines)).toEqual([]);
    lines[5] = setField(lines[5]!, 45, " 123456788");
    expect(errorsOf(lines)).toEqual(["ACH_BATCH_CONTROL_MISMATCH@6"]);
  });

  it("rejects a trace that does not begin with the batch ODFI", () => {
    const lines = base();
    lines[2] = setField(lines[2]!, 80, "12345678");
    expect(errorsOf(lines)).toEqual(["ACH_TRACE_ODFI_MISMATCH@3"]);
  });

  it("rejects a batch mixing forward entries and returns", () => {
    const returns = linesOf("returns.ach");
    const lines = base();
    // A forward entry from base-valid placed into the returns file's first batch (ODFI 09100001).
    const forward = setField(setField(lines[2]!, 80, "091000010000009"), 79, "0");
    const mixed = [...returns.slice(0, 6), forward, ...returns.slice(6)];
    expect(codesAt(parseAch(file(mixed)).summary.findings)).toContain("ACH_BATCH_MIXES_FORWARD_AND_RETURN@7");
  });

  it("rejects a batch without entries", () => {
    const lines = base();
    const empty = [lines[0]!, lines[1]!, setField(setField(setField(setField(lines[5]!, 5, "000000"), 11, "0000000000"), 21, "000000000000"), 33, "000000000000"), setField(setField(setField(setField(lines[6]!, 14, "00000000"), 22, "0000000000"), 32, "000000000000"), 44, "000000000000")];
    expect(errorsOf(empty)).toEqual(["ACH_BATCH_EMPTY@3"]);
  });
});

describe("ACH validator: entry rules", () => {
  it("rejects a transaction code that is not a NACHA code", () => {
    const lines = base();
    lines[2] = setField(lines[2]!, 2, "90");
    expect(errorsOf(lines)).toEqual(expect.arrayContaining(["ACH_TRANSACTION_CODE_INVALID@3"]));
  });

  it("rejects a credit transaction code in a debits-only SEC (TEL)", () => {
    const lines = base();
    lines[1] = setField(lines[1]!, 51, "TEL");
    expect(errorsOf(lines)).toEqual(["ACH_TRANSACTION_CODE_NOT_ALLOWED@3", "ACH_TRANSACTION_CODE_NOT_ALLOWED@5"]);
  });

  it("rejects a prenotification with a non-zero amount", () => {
    const lines = base();
    lines[2] = setField(lines[2]!, 2, "23");
    expect(errorsOf(lines)).toContain("ACH_AMOUNT_MUST_BE_ZERO@3");
  });

  it("rejects a blank individual name where the SEC code requires it (PPD)", () => {
    const lines = base();
    lines[2] = setField(lines[2]!, 55, " ".repeat(22));
    expect(errorsOf(lines)).toEqual(["ACH_MANDATORY_FIELD_MISSING@3"]);
  });

  it("rejects two payment addenda on a PPD entry", () => {
    const lines = linesOf("ppd-credits-debits.ach");
    // line 4 is entry 2 with its addenda at line 5: duplicate the addenda as sequence 0002.
    const second = setField(lines[4]!, 84, "0002");
    const withTwo = [...lines.slice(0, 5), second, ...lines.slice(5)];
    expect(codesAt(parseAch(file(withTwo)).summary.findings)).toContain("ACH_ADDENDA_TOO_MANY@4");
  });

  it("rejects an addenda whose sequence or entry sequence number is wrong", () => {
    const lines = linesOf("ppd-credits-debits.ach");
    lines[4] = setField(setField(lines[4]!, 84, "0002"), 88, "0000009");
    expect(codesAt(parseAch(file(lines)).summary.findings)).toEqual(["ACH_ADDENDA_SEQUENCE_INVALID@5", "ACH_ADDENDA_ENTRY_SEQUENCE_MISMATCH@5"]);
  });

  it("rejects a CTX entry whose declared addenda count differs from the addenda present", () => {
    const lines = linesOf("ctx-many-addenda.ach");
    lines[2] = setField(lines[2]!, 55, "0024");
    expect(codesAt(parseAch(file(lines)).summary.findings)).toEqual(["ACH_ADDENDA_COUNT_MISMATCH@3"]);
  });

  it("rejects an IAT entry missing a mandatory addenda", () => {
    const lines = linesOf("iat.ach");
    const withoutThirteen = lines.filter((l) => !l.startsWith("713"));
    const errors = codesAt(parseAch(file(withoutThirteen)).summary.findings);
    expect(errors).toContain("ACH_ADDENDA_MISSING@3");
  });

  it("rejects an unknown return reason code and an unknown change code", () => {
    const returns = linesOf("returns.ach");
    returns[3] = setField(returns[3]!, 4, "R96");
    expect(codesAt(parseAch(file(returns)).summary.findings)).toEqual(["ACH_RETURN_REASON_CODE_INVALID@4"]);
    const noc = linesOf("noc.ach");
    noc[3] = setField(noc[3]!, 4, "C15");
    expect(codesAt(parseAch(file(noc)).summary.findings)).toEqual(["ACH_CHANGE_CODE_INVALID@4"]);
  });

  it("rejects an addenda type the SEC code does not allow", () => {
    const lines = linesOf("web.ach");
    lines[3] = setField(lines[3]!, 2, "02");
    expect(codesAt(parseAch(file(lines)).summary.findings)).toContain("ACH_ADDENDA_TYPE_NOT_ALLOWED@4");
  });

  it("rejects an addenda that follows no entry", () => {
    const lines = linesOf("ppd-credits-debits.ach");
    const orphan = [...lines.slice(0, 2), lines[4]!, ...lines.slice(2)];
    expect(codesAt(parseAch(file(orphan)).summary.findings)).toContain("ACH_RECORD_OUT_OF_ORDER@3");
  });
});
