import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FieldValue } from "../../../../src/protocols/iso8583/index.ts";

export interface Iso8583Fixture {
  file: string;
  description: string;
  dictionary: string;
  wireHex: string;
  expected: { mti: string; fields: Record<string, FieldValue> };
}

export const fixturesDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/iso8583");

export function loadFixtures(): Iso8583Fixture[] {
  return readdirSync(fixturesDir).filter((file) => file.endsWith(".json")).sort().map((file) => ({
    file, ...(JSON.parse(readFileSync(join(fixturesDir, file), "utf8")) as Omit<Iso8583Fixture, "file">),
  }));
}

export function loadFixture(file: string): Iso8583Fixture {
  const fixture = loadFixtures().find((candidate) => candidate.file === file);
  if (fixture === undefined) throw new Error(`no fixture ${file}`);
  return fixture;
}
