import ts from "typescript";

/**
 * The names a module of src/ defines and exports (docs/decisions/0068): declarations with
 * `export` (function, class, interface, type, enum, each variable) and `export { a }` of a local
 * name. A re-export (`export { a } from`, or `export { a }` of an imported name) defines nothing.
 */
export function exportedDefinitions(sourceText: string): string[] {
  const file = ts.createSourceFile("module.ts", sourceText, ts.ScriptTarget.Latest, false);
  const imported = new Set<string>();
  for (const statement of file.statements) {
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    if (clause?.name !== undefined) imported.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings !== undefined && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) imported.add(element.name.text);
    }
  }
  return file.statements.flatMap((statement) => definedBy(statement, imported));
}

function definedBy(statement: ts.Statement, imported: ReadonlySet<string>): string[] {
  if (ts.isExportDeclaration(statement)) {
    const clause = statement.exportClause;
    if (statement.moduleSpecifier !== undefined) return [];
    if (clause === undefined || !ts.isNamedExports(clause)) return [];
    return clause.elements
      .filter((element) => !imported.has((element.propertyName ?? element.name).text))
      .map((element) => element.name.text);
  }
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) ?? [] : [];
  if (!modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) return [];
  if (ts.isVariableStatement(statement)) {
    const declarations = statement.declarationList.declarations;
    return declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
  }
  const named = ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)
    || ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)
    || ts.isEnumDeclaration(statement);
  return named && statement.name !== undefined ? [statement.name.text] : [];
}

/** A name defined in more than one module, tolerated with the reason. */
export interface AllowedTwin {
  name: string;
  files: readonly string[];
  why: string;
}

/**
 * Every exported name defined by more than one module, but the allowed ones; an allowance that
 * matches no such name (or other files) is reported, so the list only shrinks.
 */
export function checkUniqueExports(
  definitions: ReadonlyMap<string, readonly string[]>, allowed: readonly AllowedTwin[] = [],
): string[] {
  const violations: string[] = [];
  const twins = [...definitions]
    .map(([file, names]) => names.map((name) => ({ file, name })))
    .flat()
    .reduce((byName, { file, name }) => byName.set(name, [...(byName.get(name) ?? []), file]),
      new Map<string, string[]>());
  const same = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && [...a].sort().every((file, i) => file === [...b].sort()[i]);
  for (const allowance of allowed) {
    if (!same(twins.get(allowance.name) ?? [], allowance.files)) {
      violations.push(`allowed twin no longer exists, remove the allowance: ${allowance.name}`);
    }
  }
  for (const [name, files] of [...twins].sort(([a], [b]) => a.localeCompare(b))) {
    if (files.length < 2 || allowed.some((a) => a.name === name && same(files, a.files))) continue;
    const where = [...files].sort().join(", ");
    violations.push(`${name} is exported by ${files.length} modules: ${where}`);
  }
  return violations;
}
