import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { readExternalFile } from "../../src/recon/read-external-file.ts";

// Public bank statements and notifications from other projects, read in place (never copied).
const folder = new URL("../../../shared/conformance/iso20022/", import.meta.url);
const statements = readdirSync(folder).filter((name) => /camt05[34]/.test(name));

describe("public camt.053 / camt.054 samples import as the other side of a reconciliation", () => {
  it("finds statement samples to read", () => {
    expect(statements.length).toBeGreaterThan(0);
  });

  for (const name of statements) {
    it(`${name}: reads every entry with amount, direction and booking date, and no error`, async () => {
      const read = await readExternalFile(readFileSync(new URL(name, folder)), undefined, limits.recon);
      expect(read.ok, JSON.stringify(read.ok ? [] : read.error)).toBe(true);
      if (!read.ok) return;
      expect(read.value.format).toBe(name.includes("camt053") ? "camt053" : "camt054");
      expect(read.value.items.length).toBeGreaterThan(0);
      for (const item of read.value.items) {
        expect(item.amountMinor).toBeGreaterThanOrEqual(0n);
        expect(item.bookingDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(["C", "D"]).toContain(item.direction);
      }
    });
  }
});
