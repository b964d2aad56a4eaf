import { codeAliases, errorCatalog } from "./catalog.ts";

/** docs/errors.md, generated from the catalog so the two cannot drift (a test compares them). */
export function renderCatalogMarkdown(): string {
  const lines = [
    "# Error codes",
    "",
    "Every error clearline reports about input or a refused operation carries one of these stable codes,",
    "with the position it concerns (file and line, field, XML path, ISO 8583 field). A published",
    "code is never taken back: a renamed one keeps its old name as an alias (the last table).",
    "Generated from `src/errors/codes/*.ts` by `npm run docs:errors`.",
    "",
    "| code | meaning |",
    "| --- | --- |",
  ];
  for (const [code, meaning] of Object.entries(errorCatalog).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`| \`${code}\` | ${meaning.replace(/\|/g, "\\|")} |`);
  }
  lines.push(
    "",
    "## Renamed codes",
    "",
    "These codes were renamed for what they concern (docs/decisions/0068). Answers carry the new",
    "name. The old one still appears where it was written before the rename: a replay of an",
    "answer given before it (the same Idempotency-Key), or a partner's status report stored before",
    "it. clearline reads an old name stored in its own tables (record outcomes, a",
    "file's findings) as the new one. A client matching on a code (in lower case in HTTP problem",
    "details) should match both names.",
    "",
    "| old name | now |",
    "| --- | --- |",
  );
  for (const [alias, code] of Object.entries(codeAliases).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`| \`${alias}\` | \`${code}\` |`);
  }
  return lines.join("\n") + "\n";
}
