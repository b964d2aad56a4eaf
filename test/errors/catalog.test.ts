import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { errorCatalog } from "../../src/errors/catalog.ts";
import { renderCatalogMarkdown } from "../../src/errors/catalog-doc.ts";

const root = new URL("../../", import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith(".ts") ? [full] : [];
  });
}

describe("the error catalog", () => {
  it("is documented: docs/errors.md is the catalog as generated (run npm run docs:errors)", () => {
    expect(readFileSync(path.join(root, "docs/errors.md"), "utf8")).toBe(renderCatalogMarkdown());
  });

  it("gives every code a meaning", () => {
    for (const [code, meaning] of Object.entries(errorCatalog)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(meaning.length, code).toBeGreaterThan(10);
    }
  });

  it("holds every code that the sources hand to finding()", () => {
    const used = new Set<string>();
    for (const file of sourceFiles(path.join(root, "src"))) {
      for (const match of readFileSync(file, "utf8").matchAll(/finding\(\s*"([A-Z0-9_]+)"/g)) used.add(match[1]!);
    }
    const undocumented = [...used].filter((code) => !Object.hasOwn(errorCatalog, code));
    expect(undocumented).toEqual([]);
  });
});
