import { describe, expect, it } from "vitest";
import { parseAch, readAch, validateAch } from "../../../src/protocols/ach/reader.ts";
import type { AchEvent } from "../../../src/protocols/ach/types.ts";
import { codesAt, expectations, file, fixture, linesOf } from "./support.ts";

async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

function shape(events: AchEvent[]): string[] {
  return events.map((e) => e.type === "entry" ? `entry@${e.entry.record.line}+${e.entry.addenda.length}` : e.type === "end" ? `end:${e.summary.errorCount}/${e.summary.warningCount}` : e.type);
}

describe("ACH reader on the project's fixtures", () => {
  for (const [name, expected] of Object.entries(expectations())) {
    it(`reads ${name} with exactly its expected errors and entries`, () => {
      const { summary } = parseAch(fixture(name));
      expect(codesAt(summary.findings).sort()).toEqual(expected.errors.map((e) => `${e.code}@${e.line}`).sort());
      for (const w of expected.warnings) expect(codesAt(summary.findings, "warning")).toContain(`${w.code}@${w.line}`);
      expect(summary.entryCount).toBe(expected.entries);
    });
  }
});

describe("ACH streaming reader", () => {
  it("yields the same events whatever the chunk size, down to one byte", async () => {
    const bytes = fixture("returns.ach");
    const whole: AchEvent[] = [];
    for await (const e of readAch(bytes)) whole.push(e);
    for (const size of [1, 7, 93, 94, 95, 4096]) {
      const split: AchEvent[] = [];
      for await (const e of readAch(chunked(bytes, size))) split.push(e);
      expect(shape(split), `chunk ${size}`).toEqual(shape(whole));
    }
  });

  it("reads a file without line breaks in any chunking as 94-character records", async () => {
    const bytes = fixture("no-line-breaks.ach");
    for (const size of [1, 50, 94, 2000]) {
      const summary = await validateAch(chunked(bytes, size));
      expect(summary.entryCount).toBe(1);
      expect(summary.errorCount).toBe(0);
    }
  });

  it("ends every read with a summary event, even on empty input", async () => {
    const events: AchEvent[] = [];
    for await (const e of readAch(Buffer.alloc(0))) events.push(e);
    expect(events.at(-1)?.type).toBe("end");
    expect(events.length).toBe(1);
  });

  it("reports empty input as INPUT_EMPTY", () => {
    expect(codesAt(parseAch("").summary.findings)).toEqual(["INPUT_EMPTY@1"]);
  });

  it("emits an entry only once its addenda are complete", async () => {
    const entries: number[] = [];
    for await (const e of readAch(fixture("ctx-many-addenda.ach"))) if (e.type === "entry") entries.push(e.entry.addenda.length);
    expect(entries).toEqual([25]);
  });

  it("reads CRLF and LF files alike, without a warning", () => {
    const lf = parseAch(fixture("crlf.ach").toString("latin1").replace(/\r\n/g, "\n"));
    const crlf = parseAch(fixture("crlf.ach"));
    expect(crlf.summary.findings).toEqual([]);
    expect(lf.summary.findings).toEqual([]);
    expect(crlf.batches[0]?.entries[0]?.record.fields).toEqual(lf.batches[0]?.entries[0]?.record.fields);
  });

  it("skips blank lines with a warning naming their line", () => {
    const lines = linesOf("base-valid.ach");
    const withBlank = [...lines.slice(0, 3), "   ", ...lines.slice(3)];
    const { summary } = parseAch(file(withBlank));
    expect(codesAt(summary.findings, "warning")).toContain("ACH_BLANK_LINE@4");
    expect(summary.entryCount).toBe(3);
  });

  it("pads a short line and trims a long one, each with a warning at its line", () => {
    const lines = linesOf("base-valid.ach");
    lines[0] = lines[0]!.trimEnd();
    lines[2] = lines[2]! + "     ";
    const { summary } = parseAch(file(lines));
    expect(codesAt(summary.findings, "warning")).toEqual(expect.arrayContaining(["ACH_LINE_SHORT@1", "ACH_LINE_LONG@3"]));
    expect(summary.errorCount).toBe(0);
  });

  it("reads a Windows-1252 byte as latin1 and warns at its line and column", () => {
    const { summary, batches } = parseAch(fixture("lenient-short-lines-cp1252.ach"));
    const warning = summary.findings.find((f) => f.code === "ACH_NON_ASCII_CHARACTER");
    expect(warning?.position).toMatchObject({ line: 3, column: 66 });
    expect(batches[0]?.entries[0]?.record.fields.individualName?.trim()).toBe("ADA LOVELAC\u00c9");
  });

  it("classifies an entry error as entry scope and marks only that entry rejected", () => {
    const { batches, summary } = parseAch(fixture("malformed-check-digit.ach"));
    expect(summary.findings[0]?.scope).toBe("entry");
    expect(batches[0]?.entries.map((e) => e.rejected)).toEqual([false, true, false]);
    expect(batches[0]?.rejected).toBe(false);
    expect(summary.fileRejected).toBe(false);
  });

  it("classifies a batch control disagreement as batch scope and rejects the batch, not the file", () => {
    const { batches, summary } = parseAch(fixture("malformed-batch-debit-total.ach"));
    expect(summary.findings[0]?.scope).toBe("batch");
    expect(batches[0]?.rejected).toBe(true);
    expect(summary.fileRejected).toBe(false);
  });

  it("classifies a wrong file control as file scope and rejects the whole file", () => {
    const { summary } = parseAch(fixture("malformed-block-count.ach"));
    expect(summary.findings[0]?.scope).toBe("file");
    expect(summary.fileRejected).toBe(true);
  });

  it("names the file, line, record type and field of a finding", () => {
    const { summary } = parseAch(fixture("malformed-check-digit.ach"), { fileName: "partner.ach" });
    expect(summary.findings[0]?.position).toMatchObject({ file: "partner.ach", line: 4, recordType: "6", field: "checkDigit" });
  });
});

describe("ACH per-partner severity overrides", () => {
  it("turn an error into a warning without changing code", () => {
    const { summary } = parseAch(fixture("malformed-block-count.ach"), { severityOverrides: { ACH_FILE_BLOCK_COUNT_MISMATCH: "warning" } });
    expect(summary.errorCount).toBe(0);
    expect(codesAt(summary.findings, "warning")).toContain("ACH_FILE_BLOCK_COUNT_MISMATCH@7");
    expect(summary.fileRejected).toBe(false);
  });

  it("switch a rule off with ignore", () => {
    const { summary } = parseAch(fixture("malformed-missing-file-control.ach"), { severityOverrides: { ACH_FILE_CONTROL_MISSING: "ignore" } });
    expect(summary.findings).toEqual([]);
  });

  it("raise a warning to an error", () => {
    const { summary } = parseAch(fixture("no-line-breaks.ach"), { severityOverrides: { ACH_NO_LINE_BREAKS: "error" } });
    expect(codesAt(summary.findings)).toEqual(["ACH_NO_LINE_BREAKS@1"]);
    expect(summary.fileRejected).toBe(true);
  });
});
