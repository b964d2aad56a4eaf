import path from "node:path";
import ts from "typescript";

/**
 * The import graph of src/ and the rules of its rooms (docs/decisions/0034), as pure functions:
 * the test reads the files, these decide. Kept apart from the test so that a synthetic graph
 * with a known violation can be fed to the same checker and seen to fail.
 */

/** Higher layers may import lower ones, never the reverse. */
export const layers = ["core", "service", "adapter", "composition"] as const;
export type Layer = (typeof layers)[number];

/**
 * A room of src/. Inside a layer, the rooms table lists rooms top first: a room imports only
 * rooms listed after it in its layer (or in a lower layer), so a climb inside a layer fails too.
 */
export interface Room {
  name: string;
  layer: Layer;
  /** Under src/: a folder ("ingest/") or a file ("assert.ts"); the longest match wins. */
  paths: readonly string[];
  /** Under src/: the room's front door ("cards/index.ts"); other rooms import no other file. */
  entry?: string;
}

/**
 * One import: `from` a file of src/ ("src/..."), `to` a file ("src/...") or a package ("pg",
 * "node:net"). `typeOnly`: an `import type` or `export type ... from`, which loads nothing.
 */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly?: boolean;
  /** The names it imports ("*" for a namespace or a dynamic import); absent when unknown. */
  names?: readonly string[];
}

/**
 * Modules that some rooms may not import: a package ("pg") or a folder or file under src/
 * ("db/", "records/store/"), less the paths under src/ in `except`, and less the paths in
 * `typesFrom` when only their types are imported (a handle passed through, never opened).
 */
export interface ImportBan {
  rooms: readonly string[];
  target: string;
  except?: readonly string[];
  typesFrom?: readonly string[];
  /** An import that names only these (no namespace, no dynamic import) passes. */
  exceptNames?: readonly string[];
  why: string;
}

/** An import tolerated for now, with the reason; an allowance that matches no import is itself reported. */
export interface AllowedImport extends ImportEdge {
  why: string;
}

/**
 * Every module a file names: static `import` and `export ... from`, side-effect imports, dynamic
 * `import("...")` and `typeof import("...")`. The TypeScript scanner skips comments and strings.
 */
export function importSpecifiers(sourceText: string): string[] {
  return ts.preProcessFile(sourceText, true, true).importedFiles.map((imported) => imported.fileName);
}

/**
 * The names a file imports from each specifier, as the imported module exports them (`a as b`
 * is `a`): named imports and re-exports, "default", and "*" for a namespace, `export *` or a
 * dynamic `import()`. A side-effect import names nothing.
 */
export function importedNames(sourceText: string): Map<string, string[]> {
  const file = ts.createSourceFile("imports.ts", sourceText, ts.ScriptTarget.Latest, false);
  const names = new Map<string, string[]>();
  const add = (specifier: string, added: readonly string[]) =>
    names.set(specifier, [...(names.get(specifier) ?? []), ...added]);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, clauseNames(node.importClause));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined
      && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const exported = clause === undefined || ts.isNamespaceExport(clause)
        ? ["*"]
        : clause.elements.map((element) => (element.propertyName ?? element.name).text);
      add(node.moduleSpecifier.text, exported);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteral(argument)) add(argument.text, ["*"]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      if (ts.isStringLiteral(node.argument.literal)) add(node.argument.literal.text, ["*"]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

function clauseNames(clause: ts.ImportClause | undefined): string[] {
  if (clause === undefined) return [];
  const named = clause.namedBindings;
  const names = clause.name === undefined ? [] : ["default"];
  if (named === undefined) return names;
  if (ts.isNamespaceImport(named)) return [...names, "*"];
  const elements = named.elements.map((element) => (element.propertyName ?? element.name).text);
  return [...names, ...elements];
}

/**
 * The rooms table with each folder room's front door filled in: a room whose folder holds an
 * index.ts among `files` is entered through it (docs/decisions/0069).
 */
export function withIndexEntries(rooms: readonly Room[], files: readonly string[]): Room[] {
  return rooms.map((room) => {
    const [folder] = room.paths;
    const isFolder = room.paths.length === 1 && folder?.endsWith("/") === true;
    const index = isFolder ? `${folder}index.ts` : undefined;
    return index !== undefined && files.includes(`src/${index}`) ? { ...room, entry: index } : room;
  });
}

/** The file a relative specifier names, relative to the repository; packages and node: modules are not files of ours. */
export function resolveImport(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
}

/** The package a bare specifier names ("pg", "@nats-io/jetstream", "node:fs"); else undefined. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".")) return undefined;
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/**
 * The specifiers a file imports for their types only: every import or re-export of them is
 * `import type` / `export type`, or a `typeof import("...")`. Under verbatimModuleSyntax an
 * `import { type A }` still loads its module at run time, so it is not type-only.
 */
export function typeOnlySpecifiers(sourceText: string): Set<string> {
  const file = ts.createSourceFile("imports.ts", sourceText, ts.ScriptTarget.Latest, false);
  const types = new Set<string>();
  const values = new Set<string>();
  const visit = (node: ts.Node): void => {
    const declaration = ts.isImportDeclaration(node) || ts.isExportDeclaration(node) ? node : undefined;
    if (declaration?.moduleSpecifier !== undefined && ts.isStringLiteral(declaration.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(declaration)
        ? declaration.importClause?.isTypeOnly === true
        : declaration.isTypeOnly;
      (typeOnly ? types : values).add(declaration.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteral(argument)) values.add(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      if (ts.isStringLiteral(node.argument.literal)) types.add(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return new Set([...types].filter((specifier) => !values.has(specifier)));
}

export function roomOf(file: string, rooms: readonly Room[]): Room | undefined {
  if (!file.startsWith("src/")) return undefined;
  const inSrc = file.slice("src/".length);
  let best: { room: Room; length: number } | undefined;
  for (const room of rooms) {
    for (const prefix of room.paths) {
      const matches = prefix.endsWith("/") ? inSrc.startsWith(prefix) : inSrc === prefix;
      if (matches && (!best || prefix.length > best.length)) best = { room, length: prefix.length };
    }
  }
  return best?.room;
}

const rank = (layer: Layer): number => layers.indexOf(layer);
const edgeName = (edge: ImportEdge): string => `${edge.from} imports ${edge.to}`;

/**
 * The rules over a graph of src/ files: every file has a room; no import runs from a lower layer
 * to a higher one, nor up the order of the rooms inside a layer; no adapter imports another
 * adapter; no cycle between rooms; no cycle between files. Imports outside src/ (data under
 * protocols/) are not part of the graph. Returns one message per violation, empty when the graph
 * holds.
 */
export function checkImportGraph(files: readonly string[], imports: readonly ImportEdge[], rooms: readonly Room[], allowed: readonly AllowedImport[] = []): string[] {
  const violations: string[] = [];
  const isAllowed = (edge: ImportEdge) => allowed.some((a) => a.from === edge.from && a.to === edge.to);
  for (const allowance of allowed) {
    if (!imports.some((edge) => edge.from === allowance.from && edge.to === allowance.to)) {
      violations.push(`allowed import no longer exists, remove the allowance: ${edgeName(allowance)}`);
    }
  }
  for (const file of files) if (!roomOf(file, rooms)) violations.push(`${file} is in no room: add its folder to the rooms table`);
  const inGraph = imports.filter((edge) => edge.to.startsWith("src/") && edge.from !== edge.to && !isAllowed(edge));
  const roomEdges: Array<ImportEdge & { fromRoom: string; toRoom: string }> = [];
  for (const edge of inGraph) {
    const from = roomOf(edge.from, rooms);
    const to = roomOf(edge.to, rooms);
    if (!from || !to || from === to) continue;
    roomEdges.push({ ...edge, fromRoom: from.name, toRoom: to.name });
    if (rank(to.layer) > rank(from.layer)) violations.push(`upward import, ${from.layer} ${from.name} -> ${to.layer} ${to.name}: ${edgeName(edge)}`);
    if (from.layer === "adapter" && to.layer === "adapter") violations.push(`adapter imports adapter, ${from.name} -> ${to.name}: ${edgeName(edge)}`);
    else if (from.layer === to.layer && rooms.indexOf(to) < rooms.indexOf(from)) {
      const climb = `${from.name} -> ${to.name} (listed above it)`;
      violations.push(`climb inside the ${from.layer} layer, ${climb}: ${edgeName(edge)}`);
    }
  }
  for (const { path: cycle, members } of cycles(roomEdges.map((e) => ({ from: e.fromRoom, to: e.toRoom })))) {
    const steps = cycle.slice(1).map((room, i) => {
      const witness = roomEdges.find((e) => e.fromRoom === cycle[i] && e.toRoom === room);
      return `${room} (${witness ? edgeName(witness) : "?"})`;
    });
    violations.push(`cycle between rooms: ${cycle[0]} -> ${steps.join(" -> ")}${tangled(cycle, members)}`);
  }
  for (const { path: cycle, members } of cycles(inGraph)) violations.push(`cycle between files: ${cycle.join(" -> ")}${tangled(cycle, members)}`);
  return violations;
}

/**
 * The rules a room table adds over the layers: an import into a room with an entry, from another
 * room, names that entry; a banned import is reported with the ban's reason. Bans name rooms of
 * the table. Returns one message per violation, empty when the imports hold.
 */
export function checkEntriesAndBans(
  imports: readonly ImportEdge[], rooms: readonly Room[], bans: readonly ImportBan[],
): string[] {
  const violations: string[] = [];
  const names = new Set(rooms.map((room) => room.name));
  for (const ban of bans) {
    for (const name of ban.rooms) if (!names.has(name)) violations.push(`an import ban names ${name}, which is no room`);
  }
  for (const edge of imports) {
    const from = roomOf(edge.from, rooms);
    if (from === undefined) continue;
    const to = edge.to.startsWith("src/") ? roomOf(edge.to, rooms) : undefined;
    if (to !== undefined && to !== from && to.entry !== undefined && edge.to !== `src/${to.entry}`) {
      violations.push(`import past the entry of ${to.name} (src/${to.entry}): ${edgeName(edge)}`);
    }
    for (const ban of bans) {
      if (!ban.rooms.includes(from.name) || !isBanned(edge, ban)) continue;
      violations.push(`banned import, ${from.name} -> ${ban.target} (${ban.why}): ${edgeName(edge)}`);
    }
  }
  return violations;
}

function isBanned(edge: ImportEdge, ban: ImportBan): boolean {
  const underSrc = (target: string) =>
    edge.to === `src/${target}` || (target.endsWith("/") && edge.to.startsWith(`src/${target}`));
  if (!(edge.to === ban.target || underSrc(ban.target))) return false;
  if ((ban.except ?? []).some(underSrc)) return false;
  const names = edge.names;
  const namesOnly = (allowed: readonly string[]) =>
    names !== undefined && names.length > 0 && names.every((name) => allowed.includes(name));
  if (ban.exceptNames !== undefined && namesOnly(ban.exceptNames)) return false;
  return !(edge.typeOnly === true && (ban.typesFrom ?? []).some(underSrc));
}

/** When more nodes than the cycle's reach each other, name them all: the next cycle is among them. */
function tangled(cycle: readonly string[], members: readonly string[]): string {
  return members.length > new Set(cycle).size ? `; all caught in cycles with it: ${members.join(", ")}` : "";
}

/**
 * One cycle per strongly connected component of the graph (Tarjan), as a path that starts and
 * ends at the same node: fixing it shows the next, if any. Deterministic: nodes in sorted order.
 */
function cycles(edges: readonly ImportEdge[]): Array<{ path: string[]; members: string[] }> {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, new Set());
    if (!next.has(to)) next.set(to, new Set());
    next.get(from)?.add(to);
  }
  const successors = (node: string): string[] => [...(next.get(node) ?? [])].sort();
  const components = stronglyConnected([...next.keys()].sort(), successors);
  const found: Array<{ path: string[]; members: string[] }> = [];
  for (const component of components) {
    const members = new Set(component);
    const start = [...component].sort()[0];
    if (start === undefined) continue;
    if (component.length === 1 && !successors(start).includes(start)) continue;
    found.push({ path: shortestCycle(start, (node) => successors(node).filter((n) => members.has(n))), members: [...members].sort() });
  }
  return found.sort((a, b) => (a.path[0] ?? "").localeCompare(b.path[0] ?? ""));
}

function stronglyConnected(nodes: readonly string[], successors: (node: string) => string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of successors(node)) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    components.push(component);
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return components;
}

/** Breadth first from start back to start: the shortest cycle through it. */
function shortestCycle(start: string, successors: (node: string) => string[]): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as string;
    for (const next of successors(node)) {
      if (next === start) return [...unwind(start, node, cameFrom), start];
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

function unwind(start: string, last: string, cameFrom: ReadonlyMap<string, string>): string[] {
  const path: string[] = [];
  for (let at: string | undefined = last; at !== undefined && at !== start; at = cameFrom.get(at)) path.unshift(at);
  return [start, ...path];
}
