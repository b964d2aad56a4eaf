import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkUniqueExports, exportedDefinitions, type AllowedTwin } from "./exported-names.ts";

/**
 * Every name exported by a module of src/ is defined once (docs/decisions/0068): a reader who
 * meets `Decision` or `transferKeyOf` knows which one it is. A pair that must share a name is
 * listed with why; today none does.
 */
const allowedTwins: AllowedTwin[] = [];

const root = path.resolve(import.meta.dirname, "../..");

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return relative.endsWith(".ts") ? [relative] : [];
  });
}

describe("the names src/ exports", () => {
  it("are each defined by one module, but for the listed twins", () => {
    const definitions = new Map(sourceFiles("src").map((file) =>
      [file, exportedDefinitions(readFileSync(path.join(root, file), "utf8"))]));
    expect(checkUniqueExports(definitions, allowedTwins)).toEqual([]);
  });
});

describe("the exported names checker", () => {
  it("reads the names a module defines, and not what it re-exports", () => {
    const source = [
      `import { imported } from "./other.ts";`,
      `export function f() {}`,
      `export const a = 1, b = 2;`,
      `export interface I {}`,
      `export type T = string;`,
      `export class C {}`,
      `export enum E { X }`,
      `const local = 3;`,
      `export { local, imported };`,
      `export { elsewhere } from "./elsewhere.ts";`,
      `function hidden() {}`,
    ].join("\n");
    expect(exportedDefinitions(source)).toEqual(["f", "a", "b", "I", "T", "C", "E", "local"]);
  });

  it("reports a name two modules define, and lets a listed twin pass", () => {
    const definitions = new Map([
      ["src/a.ts", ["Decision", "only"]], ["src/b.ts", ["Decision"]], ["src/c.ts", ["Outcome"]],
      ["src/d.ts", ["Outcome"]],
    ]);
    const allowed = [{ name: "Outcome", files: ["src/d.ts", "src/c.ts"], why: "fixture" }];
    expect(checkUniqueExports(definitions, allowed)).toEqual([
      "Decision is exported by 2 modules: src/a.ts, src/b.ts",
    ]);
  });

  it("reports an allowance whose twin is gone", () => {
    const definitions = new Map([["src/a.ts", ["Decision"]]]);
    const allowed = [{ name: "Decision", files: ["src/a.ts", "src/b.ts"], why: "renamed since" }];
    expect(checkUniqueExports(definitions, allowed)).toEqual([
      "allowed twin no longer exists, remove the allowance: Decision",
    ]);
  });
});
