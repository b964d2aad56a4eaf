import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Lines longer than 100 columns in src/, counted per file, held by a ratchet (docs/decisions/
 * 0076): a file's count may only fall, and a file not in the baseline has none. The baseline is
 * exact, so a file that got shorter lines must lower its count in the same change (the count is
 * then never slack a later long line could use). `npm run lines:baseline` writes it anew.
 */
export const lineColumnsMax = 100;

export const baselinePath = path.resolve(import.meta.dirname, "line-length-baseline.json");

export type LineCounts = Readonly<Record<string, number>>;

/** Lines of `text` longer than `lineColumnsMax` columns (a column is a UTF-16 code unit). */
export function longLinesOf(text: string): number {
  return text.split("\n").filter((line) => line.length > lineColumnsMax).length;
}

/** The files of `folder` (relative to `root`) with at least one long line, and their counts. */
export function countLongLines(root: string, folder: string): LineCounts {
  const counts: Record<string, number> = {};
  const visit = (relative: string): void => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (child.endsWith(".ts")) {
        const count = longLinesOf(readFileSync(path.join(root, child), "utf8"));
        if (count > 0) counts[child] = count;
      }
    }
  };
  visit(folder);
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** What breaks the ratchet: a file above its baseline, and a baseline above its file. */
export function checkRatchet(actual: LineCounts, baseline: LineCounts): string[] {
  const problems: string[] = [];
  for (const [file, count] of Object.entries(actual)) {
    const allowed = baseline[file] ?? 0;
    if (count > allowed) {
      problems.push(`${file} has ${count} lines over ${lineColumnsMax} columns (allowed ${allowed})`);
    }
  }
  for (const [file, allowed] of Object.entries(baseline)) {
    const count = actual[file] ?? 0;
    if (count < allowed) {
      problems.push(`${file} has ${count} lines over ${lineColumnsMax} columns, its baseline says ` +
        `${allowed}: lower the baseline (npm run lines:baseline)`);
    }
  }
  return problems;
}

export function writeBaseline(root: string): LineCounts {
  const counts = countLongLines(root, "src");
  writeFileSync(baselinePath, `${JSON.stringify(counts, null, 2)}\n`);
  return counts;
}
