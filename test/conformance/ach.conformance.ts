import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAch, validateAch } from "../../src/protocols/ach/reader.ts";
import type { AchFinding } from "../../src/protocols/ach/types.ts";

// Public sample files read in place from ../shared/conformance/ach (none is copied here).
// SOURCES.md there lists every file and what a correct reader must find; the table below
// restates each "Expected finding" as our code, line (and field where it names one).
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const folder = path.resolve(repoRoot, "../shared/conformance/ach");

interface Expected { code: string; line: number; field?: string; severity?: "error" | "warning" }

const malformed: Record<string, Expected[]> = {
  "ppd-debit-invalid-entryDetail-checkDigit.ach": [
    { code: "ACH_ROUTING_CHECK_DIGIT", line: 3, field: "checkDigit" },
    { code: "ACH_LINE_SHORT", line: 1, severity: "warning" }, { code: "ACH_LINE_SHORT", line: 5, severity: "warning" },
  ],
  "invalid-two-micro-deposits.ach": [{ code: "ACH_FIELD_NOT_NUMERIC", line: 15, field: "amount" }, { code: "ACH_BATCH_TOTAL_DEBIT_MISMATCH", line: 17 }, { code: "ACH_FILE_TOTAL_DEBIT_MISMATCH", line: 18 }],
  "web-invalidNOCFile.ach": [{ code: "ACH_CHANGE_CODE_INVALID", line: 4, field: "changeCode" }],
  "pos-invalidReturnFile.ach": [{ code: "ACH_RETURN_REASON_CODE_INVALID", line: 4, field: "returnReasonCode" }],
  "iat-invalidBatchControl.ach": [{ code: "ACH_BATCH_CONTROL_MISMATCH", line: 11, field: "originatingDfiIdentification" }, { code: "ACH_BATCH_CONTROL_MISMATCH", line: 11, field: "batchNumber" }],
  "iat-invalidEntryDetail.ach": [{ code: "ACH_TRANSACTION_CODE_INVALID", line: 3, field: "transactionCode" }, { code: "ACH_BATCH_TOTAL_CREDIT_MISMATCH", line: 13 }, { code: "ACH_FILE_TOTAL_CREDIT_MISMATCH", line: 25 }],
  "issue1600-1e5RecordBefore1or8.ach": [{ code: "ACH_FILE_HEADER_MISSING", line: 1 }, { code: "ACH_RECORD_OUT_OF_ORDER", line: 4 }],
  "issue1600-1k8RecordFollowing9Record.ach": [{ code: "ACH_BATCH_CONTROL_MISSING", line: 10 }, { code: "ACH_RECORD_AFTER_FILE_CONTROL", line: 11 }],
  "issue1600-1qFormatCodeIncorrect.ach": [{ code: "ACH_FIELD_VALUE_INVALID", line: 1, field: "formatCode" }],
  "issue1600-2lCompanyNameAllZeros.ach": [{ code: "ACH_MANDATORY_FIELD_MISSING", line: 2, field: "companyName" }],
  "issue1600-3fTELIndvNameAllBlank.ach": [{ code: "ACH_MANDATORY_FIELD_MISSING", line: 8, field: "individualName" }],
  "return-no-file-header-control.ach": [{ code: "ACH_FILE_HEADER_MISSING", line: 1 }, { code: "ACH_FILE_CONTROL_MISSING", line: 4 }],
  "bh-ed-ad-bh-ed-ad-ed-ad.ach": [{ code: "ACH_FILE_HEADER_MISSING", line: 1 }, { code: "ACH_BATCH_CONTROL_MISSING", line: 4 }, { code: "ACH_BATCH_CONTROL_MISSING", line: 8 }, { code: "ACH_FILE_CONTROL_MISSING", line: 8 }],
  "skip-validation.ach": [{ code: "ACH_TRACE_NOT_ASCENDING", line: 4 }, { code: "ACH_TRACE_NOT_ASCENDING", line: 5 }, { code: "ACH_TRACE_NOT_ASCENDING", line: 6 }],
  "moov-ids.ach": [{ code: "ACH_TRACE_ODFI_MISMATCH", line: 3, field: "traceNumber" }, { code: "ACH_FILE_ENTRY_HASH_MISMATCH", line: 10, field: "entryHash" }],
  "txp-debit.ach": [{ code: "ACH_FILE_BLOCK_COUNT_MISMATCH", line: 6, field: "blockCount" }],
  "extended-ascii.ach": [{ code: "ACH_NON_ASCII_CHARACTER", line: 15, severity: "warning" }, { code: "ACH_TRACE_ODFI_MISMATCH", line: 15 }, { code: "ACH_TRACE_NOT_ASCENDING", line: 15 }],
};
/** Accepted files that must carry a leniency warning. */
const tolerated: Record<string, Expected[]> = {
  "issue702.ach": [{ code: "ACH_LINE_SHORT", line: 1, severity: "warning" }],
};

/** File names listed in SOURCES.md, by section (valid/, returns-noc/, malformed/). */
function listedFiles(): Record<string, string[]> {
  const sections: Record<string, string[]> = {};
  let section = "";
  for (const line of readFileSync(path.join(folder, "SOURCES.md"), "utf8").split("\n")) {
    const heading = /^## (\S+)\//.exec(line);
    if (heading?.[1]) section = heading[1];
    const row = /^\| ([^|]+\.ach) \|/.exec(line);
    if (row?.[1] && section) (sections[section] ??= []).push(row[1].trim());
  }
  return sections;
}

function matches(findings: AchFinding[], e: Expected): boolean {
  return findings.some((f) => f.code === e.code && f.position.line === e.line && f.severity === (e.severity ?? "error") && (e.field === undefined || f.position.field === e.field));
}


describe("ACH conformance samples (../shared/conformance/ach)", () => {
  const listed = listedFiles();

  it("lists every sample file in SOURCES.md, and every listed file is present", () => {
    for (const dir of ["valid", "returns-noc", "malformed"]) {
      expect([...(listed[dir] ?? [])].sort(), dir).toEqual(readdirSync(path.join(folder, dir)).filter((f) => f.endsWith(".ach")).sort());
    }
  });

  it("has an expected finding here for every malformed file SOURCES.md lists", () => {
    expect(Object.keys(malformed).sort()).toEqual([...(listed.malformed ?? [])].sort());
  });

  for (const dir of ["valid", "returns-noc"]) {
    for (const name of listed[dir] ?? []) {
      it(`accepts ${dir}/${name} with no error`, async () => {
        const bytes = readFileSync(path.join(folder, dir, name));
        const { summary } = parseAch(bytes, { fileName: name });
        expect(summary.findings.filter((f) => f.severity === "error")).toEqual([]);
        expect(summary.entryCount).toBeGreaterThan(0);
        for (const e of tolerated[name] ?? []) expect(matches(summary.findings, e), `${e.code} at line ${e.line}`).toBe(true);
        const streamed = await validateAch((async function* () { for (let i = 0; i < bytes.length; i += 50) yield bytes.subarray(i, i + 50); })());
        expect(streamed.errorCount).toBe(0);
      });
    }
  }

  for (const name of listed.malformed ?? []) {
    it(`rejects malformed/${name} with its named finding at the right line`, () => {
      const { summary } = parseAch(readFileSync(path.join(folder, "malformed", name)), { fileName: name });
      expect(summary.errorCount).toBeGreaterThan(0);
      for (const e of malformed[name] ?? []) expect(matches(summary.findings, e), `${e.code} at line ${e.line}${e.field ? ` (${e.field})` : ""}`).toBe(true);
    });
  }

  it("accepts the partial return file when the partner is configured to send partial files", () => {
    const bytes = readFileSync(path.join(folder, "malformed", "return-no-file-header-control.ach"));
    const { summary } = parseAch(bytes, { severityOverrides: { ACH_FILE_HEADER_MISSING: "ignore", ACH_FILE_CONTROL_MISSING: "ignore" } });
    expect(summary.errorCount).toBe(0);
    expect(summary.entryCount).toBe(1);
  });

  it("still builds both batches of a file without header, controls or batch controls", () => {
    const { batches } = parseAch(readFileSync(path.join(folder, "malformed", "bh-ed-ad-bh-ed-ad-ed-ad.ach")));
    expect(batches.map((b) => b.entries.length)).toEqual([1, 2]);
  });

  it("catches the wrong block count that moov-io/ach skips, comparing the control as read", () => {
    const { summary } = parseAch(readFileSync(path.join(folder, "malformed", "txp-debit.ach")));
    expect(summary.findings.find((f) => f.code === "ACH_FILE_BLOCK_COUNT_MISMATCH")?.message).toContain("control says 2, the file holds 1");
  });
});
