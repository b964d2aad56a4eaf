import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { codeAliases, currentCode, errorCatalog, storedNamesOf } from "../../src/errors/catalog.ts";
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

  it("keeps each renamed code's old name as an alias of a code, never of another alias", () => {
    for (const [alias, code] of Object.entries(codeAliases)) {
      expect(Object.hasOwn(errorCatalog, code), `${alias} -> ${code}`).toBe(true);
      expect(Object.hasOwn(errorCatalog, alias), alias).toBe(false);
    }
  });

  it("reads an old name as the code it was renamed to, and any other name as itself", () => {
    expect(currentCode("INGEST_RECORD_DUPLICATE")).toBe("RECORD_DUPLICATE");
    expect(currentCode("RECORD_DUPLICATE")).toBe("RECORD_DUPLICATE");
    expect(currentCode("ACH_FILE_CONTROL_MISSING")).toBe("ACH_FILE_CONTROL_MISSING");
    expect(currentCode("constructor")).toBe("constructor");
    expect(storedNamesOf("RECORD_COUNTERPARTY_UNRESOLVED"))
      .toEqual(["RECORD_COUNTERPARTY_UNRESOLVED", "INGEST_COUNTERPARTY_UNRESOLVED"]);
  });
});
