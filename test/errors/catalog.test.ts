import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { errorCatalog } from "../../src/errors/catalog.ts";
import { renderCatalogMarkdown } from "../../src/errors/catalog-doc.ts";

const root = new URL("../../", import.meta.url).pathname;

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
});
