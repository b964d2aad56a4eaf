import ts from "typescript";
import { roomOf, type Room } from "./import-graph.ts";

/**
 * Who owns each table (docs/decisions/0069), as pure functions: the test reads the files and the
 * migrated schema, these decide, so a synthetic case with a known violation can be fed to the same
 * checker and seen to fail.
 */

/** One file of src/ whose SQL names a table. */
export interface TableUse {
  file: string;
  table: string;
}

/** SQL naming another room's table, tolerated with the reason; a stale allowance is reported. */
export interface AllowedTableUse extends TableUse {
  why: string;
}

/** A table name where SQL puts one: after FROM, JOIN, INTO, UPDATE or TABLE, in upper case. */
const tableAfterKeyword = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)\b/g;

/**
 * The names SQL in a file puts where a table goes, read from its string and template literals
 * only: a comment or an identifier of the code is never SQL. Names that are no table (a CTE, a
 * function such as unnest) are in the result too; the checker keeps the tables it knows.
 */
export function sqlNames(sourceText: string): string[] {
  const file = ts.createSourceFile("sql.ts", sourceText, ts.ScriptTarget.Latest, false);
  const texts: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node)) {
      // The pieces between substitutions, joined by a placeholder: `FROM ${x} f` names no table.
      const pieces = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)];
      texts.push(pieces.join(" ? "));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  const names = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(tableAfterKeyword)) names.add(match[1] ?? "");
  }
  return [...names].sort();
}

/**
 * The rules over table uses: every owner is a room; SQL names a table only in its owner's room,
 * or with an allowance; an allowance that matches no use, or names a use by the owner itself, is
 * reported so the list only shrinks. Returns one message per violation, empty when all hold.
 */
export function checkTableOwners(
  uses: readonly TableUse[], owners: Readonly<Record<string, string>>, rooms: readonly Room[],
  allowed: readonly AllowedTableUse[] = [],
): string[] {
  const violations: string[] = [];
  const names = new Set(rooms.map((room) => room.name));
  for (const [table, owner] of Object.entries(owners)) {
    if (!names.has(owner)) violations.push(`the owner of ${table}, ${owner}, is no room`);
  }
  const named = (use: TableUse) => `${use.file} names ${use.table}`;
  const isAllowed = (use: TableUse) =>
    allowed.some((a) => a.file === use.file && a.table === use.table);
  const foreign = uses.filter((use) => {
    const owner = owners[use.table];
    return owner !== undefined && roomOf(use.file, rooms)?.name !== owner;
  });
  for (const allowance of allowed) {
    if (!foreign.some((use) => use.file === allowance.file && use.table === allowance.table)) {
      const stale = `allowed table use no longer exists, remove the allowance: ${named(allowance)}`;
      violations.push(stale);
    }
  }
  for (const use of foreign) {
    if (isAllowed(use)) continue;
    violations.push(`${named(use)}, a table of ${owners[use.table]}: ask its front door`);
  }
  return violations;
}

/** Every table of the schema has an owner, and every owner's table exists. */
export function checkOwnersCoverSchema(
  tables: readonly string[], owners: Readonly<Record<string, string>>,
): string[] {
  const unowned = tables.filter((table) => owners[table] === undefined);
  const gone = Object.keys(owners).filter((table) => !tables.includes(table));
  return [
    ...unowned.map((table) => `${table} has no owning room: add it to the owners table`),
    ...gone.map((table) => `${table} is owned but is no table of the schema: remove it`),
  ];
}
