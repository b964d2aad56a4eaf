import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, noOutcomes, transferCount } from "./support.ts";

/** A fixture with one character replaced at a 1-based line and column. */
function achWith(name: string, lineNumber: number, column: number, character: string): Buffer {
  const lines = fixture(name).toString("latin1").split("\n");
  const line = lines[lineNumber - 1] ?? "";
  lines[lineNumber - 1] = line.slice(0, column - 1) + character + line.slice(column);
  return Buffer.from(lines.join("\n"), "latin1");
}

describe("ingest: text PostgreSQL cannot store is a finding, never a failure", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("rejects the batch whose company id (part of the natural key) holds a NUL, with its line and field, and posts nothing of it", async () => {
    const scene = await givenScene(db.pool, "nul-company");
    const report = await ingest(db.pool, scene, achWith("ach/base-valid.ach", 2, 45, "\u0000"), "nul-company.ach");
    expect(report.status).not.toBe("processing");
    expect(report.outcomes.applied).toBe(0);
    expect(report.errors).toEqual(expect.arrayContaining([expect.objectContaining({ code: "TEXT_CHARACTER_INVALID", line: 2, field: "companyIdentification" })]));
    expect(await transferCount(db.pool, scene.tenantId)).toBe(0);
  });

  it("rejects only the entry whose name holds a NUL and applies the rest", async () => {
    const scene = await givenScene(db.pool, "nul-name");
    const report = await ingest(db.pool, scene, achWith("ach/base-valid.ach", 3, 58, "\u0000"), "nul-name.ach");
    expect(report).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 2, rejected: 1 } });
    expect(report.errors).toEqual([expect.objectContaining({ code: "TEXT_CHARACTER_INVALID", line: 3, field: "individualName" })]);
  });

  it("rejects an ISO 20022 file with a NUL character reference, with its position", async () => {
    const scene = await givenScene(db.pool, "nul-xml");
    const xml = fixture("iso20022/pacs008-multi.xml").toString("utf8").replace("<EndToEndId>E2E-0001", "<EndToEndId>E2E-0001&#0;");
    const report = await ingest(db.pool, scene, Buffer.from(xml), "nul.xml");
    expect(report).toMatchObject({ status: "rejected", outcomes: noOutcomes });
    expect(report.errors[0]).toMatchObject({ code: "ISO20022_XML_MALFORMED", xml_path: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf/PmtId/EndToEndId" });
  });
});
