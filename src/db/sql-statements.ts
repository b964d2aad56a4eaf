import { assert } from "../assert.ts";

/** One statement of a migration file: its text (with the comments before it) and first line. */
export interface SqlStatement {
  text: string;
  line: number;
}

/**
 * A file of SQL cut into its statements at each `;` outside quotes, identifiers, comments and
 * dollar-quoted bodies (a `DO $$ ... $$` or a function body holds `;` of its own). A text left
 * after the last `;` that holds only comments and blanks is no statement.
 */
export function splitSqlStatements(sql: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const skipped = skipQuoted(sql, i);
    if (skipped > i) {
      i = skipped;
      continue;
    }
    if (sql[i] === ";") {
      pushStatement(statements, sql, start, i + 1);
      start = i + 1;
    }
    i += 1;
  }
  pushStatement(statements, sql, start, sql.length);
  return statements;
}

function pushStatement(
  statements: SqlStatement[], sql: string, start: number, end: number,
): void {
  const text = sql.slice(start, end);
  if (withoutComments(text).trim().replace(/;$/, "").trim() === "") return;
  const leading = /^\s*/.exec(text)?.[0] ?? "";
  const line = sql.slice(0, start + leading.length).split("\n").length;
  statements.push({ text: text.trim(), line });
}

/** The index past a quoted span (string, identifier, comment, dollar body) at `i`, else `i`. */
function skipQuoted(sql: string, i: number): number {
  const two = sql.slice(i, i + 2);
  if (two === "--") {
    const end = sql.indexOf("\n", i);
    return end === -1 ? sql.length : end + 1;
  }
  if (two === "/*") return closedAt(sql, i + 2, "*/");
  const char = sql[i];
  if (char === "'") {
    const escaped = i > 0 && /[eE]/.test(sql[i - 1] ?? "") && !/\w/.test(sql[i - 2] ?? "");
    return stringEnd(sql, i + 1, escaped);
  }
  if (char === '"') return closedAt(sql, i + 1, '"');
  if (char === "$") {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0];
    const partOfName = i > 0 && /[\w$]/.test(sql[i - 1] ?? "");
    if (tag !== undefined && !partOfName) return closedAt(sql, i + tag.length, tag);
  }
  return i;
}

function closedAt(sql: string, from: number, closer: string): number {
  const end = sql.indexOf(closer, from);
  assert(end !== -1, `SQL has an unclosed ${closer} opened before offset ${from}`);
  return end + closer.length;
}

/** After the opening quote: `''` is a quote inside; in an E'' string a backslash escapes too. */
function stringEnd(sql: string, from: number, backslashEscapes: boolean): number {
  let i = from;
  while (i < sql.length) {
    if (backslashEscapes && sql[i] === "\\") i += 2;
    else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
    else if (sql[i] === "'") return i + 1;
    else i += 1;
  }
  assert(false, `SQL has an unclosed string opened before offset ${from}`);
}

/** The statement's text with its comments blanked out (quoted text kept as it is). */
export function withoutComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const skipped = skipQuoted(text, i);
    if (skipped > i) {
      const span = text.slice(i, skipped);
      const comment = span.startsWith("--") || span.startsWith("/*");
      out += comment ? span.replace(/[^\n]/g, " ") : span;
      i = skipped;
      continue;
    }
    out += text[i];
    i += 1;
  }
  return out;
}
