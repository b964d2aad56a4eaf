import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import { parseAch } from "../../../src/protocols/ach/reader.ts";
import { codesAt, file, fixture, linesOf, setField } from "./support.ts";

describe("ACH bounds, each fed one past its limit", () => {
  it("stops reading at fileBytesMax and reports INPUT_TOO_LARGE", () => {
    const bytes = fixture("base-valid.ach");
    expect(parseAch(bytes, { limits: { fileBytesMax: bytes.length } }).summary.errorCount).toBe(0);
    const { summary } = parseAch(bytes, { limits: { fileBytesMax: bytes.length - 1 } });
    expect(summary.findings.map((f) => f.code)).toContain("INPUT_TOO_LARGE");
  });

  it("keeps at most lineBytesMax bytes of a line and reports the overflow", () => {
    const lines = linesOf("base-valid.ach");
    const atBound = [...lines];
    atBound[2] = atBound[2]!.padEnd(limits.ach.lineBytesMax, " ");
    expect(parseAch(file(atBound)).summary.errorCount).toBe(0);
    const past = [...lines];
    past[2] = past[2]!.padEnd(limits.ach.lineBytesMax + 1, " ");
    expect(codesAt(parseAch(file(past)).summary.findings)).toEqual(["ACH_LINE_TOO_LONG@3"]);
  });

  it("keeps findingsMax findings and counts the rest as dropped", () => {
    const lines = linesOf("base-valid.ach");
    const blanks = Array.from({ length: limits.ach.findingsMax + 1 }, () => " ");
    const { summary } = parseAch(file([...lines.slice(0, 7), ...blanks, ...lines.slice(7)]));
    expect(summary.findings.length).toBe(limits.ach.findingsMax);
    expect(summary.findingsDropped).toBe(1);
    expect(summary.warningCount).toBe(limits.ach.findingsMax + 1);
  });

  it("attaches at most entryFindingsMax findings to one entry", () => {
    const lines = linesOf("ctx-many-addenda.ach");
    const addenda = Array.from({ length: limits.ach.entryFindingsMax + 1 }, (_, i) => setField(setField(lines[3]!, 84, String(i + 1).padStart(4, "0")), 88, "0000009"));
    const entry = setField(lines[2]!, 55, String(addenda.length).padStart(4, "0"));
    const { batches } = parseAch(file([lines[0]!, lines[1]!, entry, ...addenda, ...lines.slice(28)]));
    const findings = batches[0]?.entries[0]?.findings ?? [];
    expect(findings.length).toBe(limits.ach.entryFindingsMax);
    expect(batches[0]?.entries[0]?.rejected).toBe(true);
  });

  it("keeps at most addendaPerEntryMax addenda under one entry", () => {
    const lines = linesOf("ctx-many-addenda.ach");
    const max = limits.ach.addendaPerEntryMax;
    const addenda = Array.from({ length: max + 1 }, (_, i) => setField(lines[3]!, 84, String((i % 9999) + 1).padStart(4, "0")));
    const { batches, summary } = parseAch(file([lines[0]!, lines[1]!, lines[2]!, ...addenda, ...lines.slice(28)]));
    expect(batches[0]?.entries[0]?.addenda.length).toBe(max);
    expect(codesAt(summary.findings)).toContain(`ACH_ADDENDA_TOO_MANY@${3 + max + 1}`);
  });
});
