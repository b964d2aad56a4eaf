import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const srcDir = fileURLToPath(new URL("../../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/**
 * Regression (issue 10, defect 3): post-transfer.ts and post-transfers-batch.ts each had their
 * own account check, funds check and entries insert, kept equal only by a test.
 */
describe("one posting path", () => {
  it("has exactly one module in src/ that inserts transfers or ledger entries", () => {
    const writers = sourceFiles(srcDir)
      .filter((file) => /INSERT\s+INTO\s+(transfer|ledger_entry)\b/i.test(readFileSync(file, "utf8")))
      .map((file) => path.relative(srcDir, file));
    expect(writers).toEqual(["ledger/post-transfers.ts"]);
  });
});
