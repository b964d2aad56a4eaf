import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isErrorCode } from "../../../src/errors/catalog.ts";
import { inspectAch } from "../../../src/normalize/inspect-ach.ts";
import { parseAch, validateAch } from "../../../src/protocols/ach/reader.ts";
import { expectations, fixture } from "./support.ts";

const samples = Object.keys(expectations()).map((name) => fixture(name));

/** Reading ends with a summary: findings or records, never an exception, never a hang. */
function readsToAnAnswer(bytes: Buffer): void {
  const parsed = parseAch(bytes, { limits: { findingsMax: 50 } });
  expect(parsed.summary.findings.length > 0 || parsed.summary.entryCount > 0).toBe(true);
}

describe("ACH reader on hostile input (property-based)", () => {
  it("answers every mutated fixture with findings or records", () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: samples.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 20 }),
      (which, mutations) => {
        const bytes = Buffer.from(samples[which]!);
        for (const [at, value] of mutations) bytes[at % bytes.length] = value;
        readsToAnAnswer(bytes);
      }), { numRuns: 400 });
  });

  it("answers every truncated fixture with findings or records", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: samples.length - 1 }), fc.nat(), (which, cut) => {
      const sample = samples[which]!;
      readsToAnAnswer(sample.subarray(0, cut % (sample.length + 1)));
    }), { numRuns: 400 });
  });

  it("answers arbitrary bytes with findings", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 3_000 }), (bytes) => {
      const { summary } = parseAch(Buffer.from(bytes));
      expect(summary.findings.length).toBeGreaterThan(0);
    }), { numRuns: 300 });
  });

  it("answers records spliced in any order, streamed in random chunks, the same as whole", async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 0, max: samples.length - 1 }), fc.array(fc.nat(), { maxLength: 30 }), fc.integer({ min: 1, max: 300 }),
      async (which, order, chunk) => {
        const lines = samples[which]!.toString("latin1").split("\n");
        const spliced = Buffer.from(order.map((i) => lines[i % lines.length]).join("\n"), "latin1");
        async function* stream() { for (let i = 0; i < spliced.length; i += chunk) yield spliced.subarray(i, i + chunk); }
        const streamed = await validateAch(stream());
        const whole = parseAch(spliced).summary;
        expect(streamed.findings.map((f) => f.code)).toEqual(whole.findings.map((f) => f.code));
        expect(streamed.entryCount).toBe(whole.entryCount);
      }), { numRuns: 200 });
  });

  // The leniencies of decision 0006: files without line breaks (94-byte blocks) and zero files. An
  // inserted or deleted byte shifts every later block, which set-only mutations never do.
  const lenient = ["no-line-breaks.ach", "no-line-breaks-trailing-newline.ach", "blocked-10-records-per-line.ach", "zero-file.ach", "trace-reused-across-batches.ach"].map((name) => fixture(name));
  const edit = fc.record({ kind: fc.constantFrom("set", "insert", "delete"), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });
  function edited(sample: Buffer, edits: Array<{ kind: string; at: number; byte: number }>): Buffer {
    let bytes = Buffer.from(sample);
    for (const { kind, at, byte } of edits) {
      const where = bytes.length === 0 ? 0 : at % (bytes.length + 1);
      if (kind === "set" && where < bytes.length) bytes[where] = byte;
      else if (kind === "insert") bytes = Buffer.concat([bytes.subarray(0, where), Buffer.from([byte]), bytes.subarray(where)]);
      else bytes = Buffer.concat([bytes.subarray(0, where), bytes.subarray(where + 1)]);
    }
    return bytes;
  }

  it("answers files without line breaks and zero files with bytes inserted, deleted or changed with findings or records", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: lenient.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 6 }), (which, edits) => {
      readsToAnAnswer(edited(lenient[which]!, edits));
    }), { numRuns: 600 });
  });

  it("inspects every edited file to a report whose findings carry catalog codes, never an exception", () => {
    const all = [...samples, ...lenient];
    fc.assert(fc.property(fc.integer({ min: 0, max: all.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 6 }), (which, edits) => {
      const report = inspectAch(edited(all[which]!, edits));
      expect(report.contentHash).toMatch(/^[0-9a-f]{64}$/);
      expect(report.recordCount).toBeGreaterThanOrEqual(report.records.length);
      for (const found of report.findings) expect(isErrorCode(found.code)).toBe(true);
    }), { numRuns: 400 });
  });
});
