import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { AchFinding } from "../../../src/protocols/ach/types.ts";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const fixturesDir = path.join(repoRoot, "fixtures/ach");

export function fixture(name: string): Buffer {
  return readFileSync(path.join(fixturesDir, name));
}

export interface FixtureExpectation {
  errors: { code: string; line: number }[];
  warnings: { code: string; line: number }[];
  entries: number;
  roundTrip?: boolean;
  lineEnding?: "\n" | "\r\n";
}

export function expectations(): Record<string, FixtureExpectation> {
  return (JSON.parse(readFileSync(path.join(fixturesDir, "expectations.json"), "utf8")) as { fixtures: Record<string, FixtureExpectation> }).fixtures;
}

/** The lines of a fixture, to change one field of one record and read the result. */
export function linesOf(name: string): string[] {
  return fixture(name).toString("latin1").split("\n").filter((l) => l !== "");
}

export function setField(line: string, start: number, value: string): string {
  return line.slice(0, start - 1) + value + line.slice(start - 1 + value.length);
}

export function file(lines: string[]): Buffer {
  return Buffer.from(lines.join("\n") + "\n", "latin1");
}

export function codesAt(findings: AchFinding[], severity: "error" | "warning" = "error"): string[] {
  return findings.filter((f) => f.severity === severity).map((f) => `${f.code}@${f.position.line}`);
}
