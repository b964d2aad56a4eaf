import { describe, expect, it } from "vitest";
import { generateAchChunks, generateAchFile } from "../../../src/protocols/ach/generator.ts";
import { parseAch, validateAch } from "../../../src/protocols/ach/reader.ts";
import { toAchFileModel, writeAchFile } from "../../../src/protocols/ach/writer.ts";
import { expectations, fixture } from "./support.ts";

describe("ACH writer", () => {
  for (const [name, expected] of Object.entries(expectations()).filter(([, e]) => e.roundTrip)) {
    it(`gives ${name} back byte for byte: read(write(read(file))) == file`, () => {
      const bytes = fixture(name);
      const written = writeAchFile(toAchFileModel(parseAch(bytes)), { lineEnding: expected.lineEnding ?? "\n" });
      expect(written.ok).toBe(true);
      if (written.ok) expect(written.value.toString("latin1")).toBe(bytes.toString("latin1"));
    });
  }

  it("recomputes wrong controls: a file with a bad entry hash comes out valid", () => {
    const written = writeAchFile(toAchFileModel(parseAch(fixture("malformed-file-entry-hash.ach"))));
    expect(written.ok && parseAch(written.value).summary.findings).toEqual([]);
  });

  it("sets the addenda indicator from the addenda it writes", () => {
    const model = toAchFileModel(parseAch(fixture("web.ach")));
    model.batches[0]!.entries[1]!.addenda = [{ addendaTypeCode: "05", paymentRelatedInformation: "ADDED", addendaSequenceNumber: "1", entryDetailSequenceNumber: "0000002" }];
    const written = writeAchFile(model);
    expect(written.ok && parseAch(written.value).summary.findings).toEqual([]);
  });

  it("refuses a value wider than its field, as a value not an exception", () => {
    const model = toAchFileModel(parseAch(fixture("web.ach")));
    model.batches[0]!.entries[0]!.fields.individualName = "X".repeat(23);
    const written = writeAchFile(model);
    expect(written.ok).toBe(false);
    if (!written.ok) expect(written.error).toMatchObject({ code: "ACH_WRITE_FIELD_TOO_LONG", position: { field: "individualName" } });
  });
});

describe("ACH file generator", () => {
  it("produces a valid file with exactly the entries asked for, across batches", async () => {
    const summary = await validateAch(generateAchFile({ entries: 2_345, batches: 3, seed: 7 }));
    expect(summary.findings).toEqual([]);
    expect(summary.entryCount).toBe(2_345);
    expect(summary.batchCount).toBe(3);
  });

  it("is deterministic for a seed", () => {
    const a = Buffer.concat([...generateAchChunks({ entries: 50, seed: 3 })]);
    const b = Buffer.concat([...generateAchChunks({ entries: 50, seed: 3 })]);
    const c = Buffer.concat([...generateAchChunks({ entries: 50, seed: 4 })]);
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
  });

  it("yields chunks no larger than asked plus one record, never the whole file at once", () => {
    const sizes = [...generateAchChunks({ entries: 5_000, chunkBytesMax: 8_192 })].map((c) => c.length);
    expect(sizes.length).toBeGreaterThan(50);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8_192 + 95);
  });
});
