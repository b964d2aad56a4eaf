import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// ISO 8583 fields are read and written by their standard names (STYLE.md; decision 0056):
// textField(message, de.retrievalReferenceNumber), not textField(message, 37). The codec in
// src/protocols/ works by number by nature (bitmaps, dictionaries) and is left out; an error's
// position (fieldPath: ["2"]) is the catalog's position format, not a read.
const root = path.resolve(import.meta.dirname, "../..");
const byNumber = [
  /\btextField\(\s*[\w.?]+\s*,\s*\d+\s*\)/,      // textField(message, 37)
  /fields\??\.?\[\s*"?\d+"?\s*\]/i,              // message.fields[39], requestFields["41"]
  /->>\s*'\d+'/,                                  // response_fields->>'3' in SQL
];
const readsByNumber = (line: string) => byNumber.some((pattern) => pattern.test(line));

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return relative.endsWith(".ts") ? [relative] : [];
  });
}

describe("ISO 8583 fields outside the codec", () => {
  it("are read by name in src/, never by number", () => {
    const found = sourceFiles("src").filter((file) => !file.startsWith("src/protocols/")).flatMap((file) =>
      readFileSync(path.join(root, file), "utf8").split("\n").flatMap((line, index) =>
        (readsByNumber(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])));
    expect(found).toEqual([]);
  });

  it("are found by the patterns when read by number, and not when read by name", () => {
    const byNumberLines = [
      `textField(message, 37)`, `String(result.response.fields[39])`, `row.responseFields?.["38"]`,
      `i.response_fields->>'3' LIKE`,
    ];
    const byNameLines = [
      `textField(message, de.retrievalReferenceNumber)`, `response.fields[de.responseCode]`,
      `fieldPath: ["2"]`, `fields[fieldNumber]`,
    ];
    expect(byNumberLines.filter((line) => !readsByNumber(line))).toEqual([]);
    expect(byNameLines.filter(readsByNumber)).toEqual([]);
  });
});
