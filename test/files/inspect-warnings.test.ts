import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectAch } from "../../src/normalize/inspect-ach.ts";
import { inspectIso20022 } from "../../src/normalize/inspect-iso20022.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest } from "./support.ts";

// Every fixture file of both formats that inspect reads without a file-level error: what inspect
// warns about, ingest reports too (the ingest output once dropped the addenda-trace warning).
const fixtureDir = new URL("../../fixtures/", import.meta.url);
const files = [
  ...readdirSync(new URL("ach/", fixtureDir)).filter((name) => name.endsWith(".ach")).map((name) => ({ name: `ach/${name}`, inspect: inspectAch })),
  ...readdirSync(new URL("iso20022/", fixtureDir)).filter((name) => name.endsWith(".xml")).map((name) => ({ name: `iso20022/${name}`, inspect: (bytes: Buffer) => inspectIso20022(bytes, { fileName: name }) })),
].filter((file) => file.inspect(fixture(file.name)).findings.every((found) => found.severity === "warning"));

/** How often each warning code occurs: ingest must report each at least as often. */
function codeCounts(codes: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const code of codes) counts.set(code, (counts.get(code) ?? 0) + 1);
  return counts;
}

describe("ingest reports every warning inspect reports", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("covers the lenient fixtures of both formats, each of which inspect warns about", () => {
    const names = files.map((file) => file.name);
    for (const file of files.filter((f) => /no-line-breaks|zero-file|no-namespace|keeps-forward/.test(f.name))) {
      expect(file.inspect(fixture(file.name)).findings.length, file.name).toBeGreaterThan(0);
    }
    for (const name of ["ach/no-line-breaks.ach", "ach/zero-file.ach", "ach/return-keeps-forward-trace-and-code.ach", "iso20022/pain002-no-namespace.xml", "iso20022/pacs008-apphdr-no-namespace.xml"]) {
      expect(names).toContain(name);
    }
  });

  it.each(files.map((file) => [file.name, file] as const))("%s", async (name, file) => {
    const content = fixture(name);
    const inspected = codeCounts(file.inspect(content).findings.map((found) => found.code));
    const scene = await givenScene(db.pool, `warnings-${name.replace(/\W/g, "-")}`);
    const report = await ingest(db.pool, scene, content, name.split("/")[1] ?? name);
    const reported = codeCounts(report.warnings.map((found) => found.code));
    const missing = [...inspected].filter(([code, count]) => (reported.get(code) ?? 0) < count).map(([code, count]) => `${code} x${count - (reported.get(code) ?? 0)}`);
    expect(missing).toEqual([]);
  });
});
