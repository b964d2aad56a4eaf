import { describe, expect, it } from "vitest";
import { inspectIso20022 } from "../../../src/normalize/inspect-iso20022.ts";

// Issue 30: a pacs.008 whose IntrBkSttlmDt is a TARGET2 closing day is flagged (decision 0101:
// the date is kept as written; the clearing system does not settle on it).

function pacs008(settlementDate: string, currency = "EUR"): Buffer {
  return Buffer.from('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>' +
    "<GrpHdr><MsgId>SD-1</MsgId><CreDtTm>2026-12-20T09:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs>" +
    "<SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf>" +
    "<InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt>" +
    "<InstdAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>" +
    "<CdtTrfTxInf><PmtId><EndToEndId>E2E-SD</EndToEndId><TxId>TX-SD</TxId></PmtId>" +
    `<IntrBkSttlmAmt Ccy="${currency}">100.00</IntrBkSttlmAmt>` +
    `<IntrBkSttlmDt>${settlementDate}</IntrBkSttlmDt></CdtTrfTxInf></FIToFICstmrCdtTrf></Document>`);
}

const closedDay = (date: string, currency?: string) =>
  inspectIso20022(pacs008(date, currency)).findings.filter((f) => f.code === "ISO20022_SETTLEMENT_DAY_CLOSED");

describe("a settlement date on a closed day of the currency's clearing system", () => {
  it("is flagged for EUR on a TARGET2 closing day (Christmas Day), at the transaction, as a warning", () => {
    const found = closedDay("2026-12-25");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ severity: "warning", position: { xmlPath: expect.stringContaining("CdtTrfTxInf") } });
    expect(found[0]?.message).toContain("2026-12-25 is not a business day of target2");
  });

  it("is not flagged on a TARGET2 business day", () => {
    expect(closedDay("2026-12-23")).toEqual([]);
  });

  it("is judged by the currency's own calendar: 2026-11-26 (Thanksgiving) closed for USD, open for EUR", () => {
    expect(closedDay("2026-11-26", "USD")).toHaveLength(1);
    expect(closedDay("2026-11-26", "EUR")).toEqual([]);
  });
});
