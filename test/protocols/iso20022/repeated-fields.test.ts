import { describe, expect, it } from "vitest";
import { read } from "./helpers.ts";

// ChrgsInf repeats, one per agent that deducted charges (docs/decisions/0108): pacs.008.json
// reads up to 16 occurrences of ChrgsInf/Amt, the n-th as ChrgsInfAmt.n; a 17th is an error.

function withCharges(count: number): string {
  const charges = Array.from({ length: count }, (_, i) =>
    `<ChrgsInf><Amt Ccy="USD">1.0${i % 10}</Amt><Agt><FinInstnId><BICFI>BANKGB2LXXX</BICFI>`
    + "</FinInstnId></Agt></ChrgsInf>").join("");
  return '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>'
    + "<GrpHdr><MsgId>CHG-1</MsgId><CreDtTm>2025-03-10T09:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs>"
    + "<SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr>"
    + "<CdtTrfTxInf><PmtId><EndToEndId>E2E</EndToEndId><TxId>TX</TxId></PmtId>"
    + '<IntrBkSttlmAmt Ccy="USD">100.00</IntrBkSttlmAmt><IntrBkSttlmDt>2025-03-10</IntrBkSttlmDt>'
    + `<ChrgBr>SHAR</ChrgBr>${charges}</CdtTrfTxInf></FIToFICstmrCdtTrf></Document>`;
}

describe("a repeated ISO 20022 field (ChrgsInf/Amt)", () => {
  it("reads every occurrence with its currency and position", () => {
    const [transaction] = read(withCharges(3)).transactions;
    expect(transaction?.findings).toEqual([]);
    expect(transaction?.values).toMatchObject({
      ChrgsInfAmt: "1.00", "ChrgsInfAmt@Ccy": "USD", "ChrgsInfAmt.2": "1.01",
      "ChrgsInfAmt.3": "1.02", "ChrgsInfAmt.3@Ccy": "USD",
    });
    expect(transaction?.xmlPaths["ChrgsInfAmt.2"])
      .toBe("/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/ChrgsInf[2]/Amt");
  });

  it("reads 16 occurrences and refuses a 17th at its position", () => {
    expect(read(withCharges(16)).transactions[0]?.findings).toEqual([]);
    const findings = read(withCharges(17)).transactions[0]?.findings ?? [];
    expect(findings.map((f) => [f.code, f.severity, f.position.xmlPath])).toEqual([[
      "ISO20022_FIELD_INVALID", "error", "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/ChrgsInf[17]",
    ]]);
  });
});
