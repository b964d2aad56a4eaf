import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  baselinePath, checkRatchet, countLongLines, longLinesOf, type LineCounts,
} from "./line-length.ts";

const root = path.resolve(import.meta.dirname, "../..");

describe("the lines of src/", () => {
  it("are at most 100 columns, but for the baseline's count per file, which only falls", () => {
    const baseline = JSON.parse(readFileSync(baselinePath, "utf8")) as LineCounts;
    expect(checkRatchet(countLongLines(root, "src"), baseline)).toEqual([]);
  });
});

describe("the line length ratchet", () => {
  it("counts lines past 100 columns, and not one of exactly 100", () => {
    expect(longLinesOf(["a".repeat(100), "b".repeat(101), "", "c".repeat(300)].join("\n"))).toBe(2);
  });

  it("reports a file with more long lines than its baseline, and a new file with any", () => {
    expect(checkRatchet({ "src/a.ts": 3, "src/new.ts": 1 }, { "src/a.ts": 2 })).toEqual([
      "src/a.ts has 3 lines over 100 columns (allowed 2)",
      "src/new.ts has 1 lines over 100 columns (allowed 0)",
    ]);
  });

  it("reports a baseline above its file, so the count cannot be used again", () => {
    expect(checkRatchet({ "src/a.ts": 1 }, { "src/a.ts": 2, "src/gone.ts": 4 })).toEqual([
      "src/a.ts has 1 lines over 100 columns, its baseline says 2: lower the baseline " +
        "(npm run lines:baseline)",
      "src/gone.ts has 0 lines over 100 columns, its baseline says 4: lower the baseline " +
        "(npm run lines:baseline)",
    ]);
  });

  it("passes a tree that matches its baseline", () => {
    expect(checkRatchet({ "src/a.ts": 2 }, { "src/a.ts": 2 })).toEqual([]);
  });
});
