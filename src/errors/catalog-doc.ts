import { errorCatalog } from "./catalog.ts";

/** docs/errors.md, generated from the catalog so the two cannot drift (a test compares them). */
export function renderCatalogMarkdown(): string {
  const lines = [
    "# Error codes",
    "",
    "Every error clearline reports about input or a refused operation carries one of these stable codes,",
    "with the position it concerns (file and line, field, XML path, ISO 8583 field). Codes are never",
    "renamed once published. Generated from `src/errors/codes/*.ts` by `npm run docs:errors`.",
    "",
    "| code | meaning |",
    "| --- | --- |",
  ];
  for (const [code, meaning] of Object.entries(errorCatalog).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`| \`${code}\` | ${meaning.replace(/\|/g, "\\|")} |`);
  }
  return lines.join("\n") + "\n";
}
