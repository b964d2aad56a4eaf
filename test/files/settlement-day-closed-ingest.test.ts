import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectIso20022 } from "../../src/normalize/inspect-iso20022.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenScene, ingest, noOutcomes } from "./support.ts";

/**
 * Issue 30: a pacs.008 whose IntrBkSttlmDt is a TARGET2 closing day is flagged when it is
 * ingested, not only by `inspect` (ISO20022_SETTLEMENT_DAY_CLOSED, a warning at the
 * transaction): the record still applies, its date as written (decision 0101).
 */
function pacs008(settlementDate: string): Buffer {
  return Buffer.from('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">'
    + "<FIToFICstmrCdtTrf><GrpHdr><MsgId>T2-1</MsgId><CreDtTm>2026-12-20T09:00:00Z</CreDtTm>"
    + "<NbOfTxs>1</NbOfTxs><SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf>"
    + "<InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt>"
    + "<InstdAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>"
    + "<CdtTrfTxInf><PmtId><EndToEndId>E2E-T2</EndToEndId><TxId>TX-T2</TxId></PmtId>"
    + '<IntrBkSttlmAmt Ccy="EUR">100.00</IntrBkSttlmAmt>'
    + `<IntrBkSttlmDt>${settlementDate}</IntrBkSttlmDt></CdtTrfTxInf></FIToFICstmrCdtTrf>`
    + "</Document>");
}

describe("a pacs.008 settling on a TARGET2 closing day, ingested", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("reports the closed day in the file's warnings, as inspect does, and applies the record",
    async () => {
      const scene = await givenScene(db.pool, "target2-closed");
      const content = pacs008("2026-12-25");
      const report = await ingest(db.pool, scene, content, "christmas.xml");
      expect(report.outcomes).toEqual({ ...noOutcomes, applied: 1 });
      const closed = report.warnings.filter((w) => w.code === "ISO20022_SETTLEMENT_DAY_CLOSED");
      expect(closed).toEqual([expect.objectContaining({
        message: expect.stringContaining("2026-12-25 is not a business day of target2"),
      })]);
      const inspected = inspectIso20022(content).findings
        .filter((f) => f.code === "ISO20022_SETTLEMENT_DAY_CLOSED");
      expect(closed.map((w) => w.message)).toEqual(inspected.map((f) => f.message));
    });

  it("reports nothing on a TARGET2 business day", async () => {
    const scene = await givenScene(db.pool, "target2-open");
    const report = await ingest(db.pool, scene, pacs008("2026-12-23"), "open.xml");
    expect(report.warnings.filter((w) => w.code === "ISO20022_SETTLEMENT_DAY_CLOSED")).toEqual([]);
  });
});
