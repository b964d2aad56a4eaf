import { describe, expect, it } from "vitest";
import { inspectIso20022 } from "../../../src/normalize/inspect-iso20022.ts";
import { read } from "./helpers.ts";

// Issue 30 item 6: GrpHdr/TtlIntrBkSttlmAmt was never compared with the transactions, only
// CtrlSum was. ISO 20022 pacs.008 rules TotalInterbankSettlementAmountAndSumRule (the total is
// the sum of every IntrBkSttlmAmt) and TotalInterbankSettlementAmountRule (all in its currency).

const headerPath = "/Document/FIToFICstmrCdtTrf/GrpHdr";

function credit(amount: string, currency = "EUR", endToEndId = "E2E"): string {
  return `<CdtTrfTxInf><PmtId><EndToEndId>${endToEndId}</EndToEndId>` +
    `<TxId>TX-${endToEndId}</TxId></PmtId>` +
    `<IntrBkSttlmAmt Ccy="${currency}">${amount}</IntrBkSttlmAmt>` +
    "<IntrBkSttlmDt>2025-03-10</IntrBkSttlmDt></CdtTrfTxInf>";
}

/** A pacs.008.001.08 with a TtlIntrBkSttlmAmt and no CtrlSum. */
function pacs008WithTotal(total: string, totalCurrency: string, transactions: string[]): string {
  return '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>' +
    "<GrpHdr><MsgId>TOTAL-1</MsgId><CreDtTm>2025-03-10T09:00:00Z</CreDtTm>" +
    `<NbOfTxs>${transactions.length}</NbOfTxs>` +
    `<TtlIntrBkSttlmAmt Ccy="${totalCurrency}">${total}</TtlIntrBkSttlmAmt>` +
    "<SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf>" +
    "<InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt>" +
    "<InstdAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>" +
    `${transactions.join("")}</FIToFICstmrCdtTrf></Document>`;
}

function pacs004WithTotal(total: string, returned: string[]): string {
  const transactions = returned.map((amount, i) =>
    `<TxInf><RtrId>R${i + 1}</RtrId><OrgnlEndToEndId>E${i + 1}</OrgnlEndToEndId>` +
    `<RtrdIntrBkSttlmAmt Ccy="EUR">${amount}</RtrdIntrBkSttlmAmt>` +
    "<IntrBkSttlmDt>2025-03-12</IntrBkSttlmDt>" +
    "<RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn></RtrRsnInf></TxInf>");
  return '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09"><PmtRtr>' +
    "<GrpHdr><MsgId>RTR-1</MsgId><CreDtTm>2025-03-12T10:00:00Z</CreDtTm>" +
    `<NbOfTxs>${returned.length}</NbOfTxs>` +
    `<TtlRtrdIntrBkSttlmAmt Ccy="EUR">${total}</TtlRtrdIntrBkSttlmAmt>` +
    "<SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr>" +
    `${transactions.join("")}</PmtRtr></Document>`;
}

describe("pacs.008 GrpHdr/TtlIntrBkSttlmAmt against the transactions", () => {
  it("rejects a header total of 10000 over one transaction of 5000 when CtrlSum is absent", () => {
    const result = read(pacs008WithTotal("10000.00", "EUR", [credit("5000.00")]));
    expect(result.fileFindings).toEqual([expect.objectContaining({
      code: "ISO20022_TOTAL_AMOUNT_MISMATCH", severity: "error", scope: "file",
      position: { xmlPath: `${headerPath}/TtlIntrBkSttlmAmt` }, valueMasked: "10000.00",
    })]);
  });

  it("accepts a total equal to the exact sum of the transactions, whatever the decimals", () => {
    const transactions = [credit("0.10", "EUR", "A"), credit("0.2")];
    const result = read(pacs008WithTotal("0.3", "EUR", transactions));
    expect(result.allFindings).toEqual([]);
  });

  it("names the total and the sum in the finding", () => {
    const transactions = [credit("0.10", "EUR", "A"), credit("0.20")];
    const result = read(pacs008WithTotal("0.31", "EUR", transactions));
    expect(result.fileFindings[0]?.message).toBe(
      "TtlIntrBkSttlmAmt announces EUR 0.31, the transactions' IntrBkSttlmAmt add up to EUR 0.30",
    );
  });

  it("rejects a transaction in another currency than the total, at that amount's Ccy", () => {
    const transactions = [credit("1.00", "EUR", "A"), credit("1.00", "USD")];
    const result = read(pacs008WithTotal("2.00", "EUR", transactions));
    expect(result.fileFindings).toEqual([expect.objectContaining({
      code: "ISO20022_TOTAL_CURRENCY_MISMATCH", severity: "error", scope: "file",
      position: {
        xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/IntrBkSttlmAmt/@Ccy",
      },
      valueMasked: "USD",
    })]);
  });

  it("reports the total's currency when every transaction is in another one", () => {
    const result = read(pacs008WithTotal("1.00", "USD", [credit("1.00", "EUR")]));
    expect(result.fileFindings).toEqual([expect.objectContaining({
      code: "ISO20022_TOTAL_CURRENCY_MISMATCH",
      position: { xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt/@Ccy" },
    })]);
  });

  it("shows the mismatch in inspect, with the element path", () => {
    const xml = pacs008WithTotal("10000.00", "EUR", [credit("5000.00")]);
    const report = inspectIso20022(Buffer.from(xml));
    expect(report.findings).toEqual([expect.objectContaining({
      code: "ISO20022_TOTAL_AMOUNT_MISMATCH",
      position: { xmlPath: `${headerPath}/TtlIntrBkSttlmAmt` },
    })]);
  });
});

describe("pacs.004 GrpHdr/TtlRtrdIntrBkSttlmAmt against the returned amounts", () => {
  it("rejects a returned total that is not the sum of the returned amounts", () => {
    const result = read(pacs004WithTotal("300.00", ["100.00", "100.00"]));
    expect(result.fileFindings).toEqual([expect.objectContaining({
      code: "ISO20022_TOTAL_AMOUNT_MISMATCH",
      position: { xmlPath: "/Document/PmtRtr/GrpHdr/TtlRtrdIntrBkSttlmAmt" },
    })]);
  });

  it("accepts a returned total equal to the sum", () => {
    expect(read(pacs004WithTotal("200.00", ["100.00", "100.00"])).allFindings).toEqual([]);
  });
});
