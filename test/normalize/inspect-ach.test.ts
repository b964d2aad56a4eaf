import { describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { inspectAch } from "../../src/normalize/inspect-ach.ts";
import { generateAchChunks } from "../../src/protocols/ach/generator.ts";
import { fixture } from "../protocols/ach/support.ts";

describe("inspectAch", () => {
  it("reports format, file identity, header and each record's key, fingerprint, kind and amount", () => {
    const report = inspectAch(fixture("returns.ach"), { fileName: "returns.ach" });
    expect(report.format).toBe("ach");
    expect(report.identity.key).toBe("ach-file:091000019:231380104:250304:1015:F");
    expect(report.header.immediateOriginName).toBe("CLEARLINE TEST BANK");
    expect(report.findings).toEqual([]);
    expect(report.recordCount).toBe(3);
    expect(report.records[0]).toMatchObject({ position: "line 3", kind: "return", amountMinor: "125000", currency: "USD", original: "ach-link:231380100000001:09100001" });
    expect(report.records[0]?.naturalKey).toMatch(/^ach:09100001:091000010000001:/);
    expect(report.records[0]?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(report.records[0]?.identifiers.traceNumber).toBe("091000010000001");
    expect(report.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("lists findings with their file and line", () => {
    const report = inspectAch(fixture("malformed-check-digit.ach"), { fileName: "partner.ach" });
    expect(report.findings.map((f) => [f.code, f.position.file, f.position.line])).toEqual([["ACH_ROUTING_CHECK_DIGIT", "partner.ach", 4]]);
    expect(report.records[1]?.identifiers.rejected).toBe("true");
  });

  it("lists at most recordsMax records and counts them all", () => {
    const bytes = Buffer.concat([...generateAchChunks({ entries: 30 })]);
    const report = inspectAch(bytes, { recordsMax: 29 });
    expect(report.records.length).toBe(29);
    expect(report.recordCount).toBe(30);
  });

  it("lists at most inspectRecordsMax records by default", () => {
    const bytes = Buffer.concat([...generateAchChunks({ entries: limits.ach.inspectRecordsMax + 1 })]);
    const report = inspectAch(bytes);
    expect(report.records.length).toBe(limits.ach.inspectRecordsMax);
    expect(report.recordCount).toBe(limits.ach.inspectRecordsMax + 1);
  });

  it("never throws on garbage: it reports findings", () => {
    const report = inspectAch(Buffer.from("not an ach file at all\n"));
    expect(report.findings.length).toBeGreaterThan(0);
    expect(report.records).toEqual([]);
  });
});
