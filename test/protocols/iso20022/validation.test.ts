import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { creditTransaction, fixture, fixtureDirectory, pacs008, read } from "./helpers.ts";

interface Expected { code: string; severity: string; scope: string; xmlPath?: string }
const expected = JSON.parse(readFileSync(new URL("bad/expected.json", fixtureDirectory), "utf8")) as Record<string, Expected>;

describe("validation with positions", () => {
  it.each(Object.entries(expected))("%s yields its expected finding at its xmlPath", (name, want) => {
    const result = read(fixture(`bad/${name}`));
    const found = result.allFindings.find((f) => f.code === want.code);
    expect(found, `${name}: ${JSON.stringify(result.allFindings)}`).toBeDefined();
    expect(found?.severity).toBe(want.severity);
    expect(found?.scope).toBe(want.scope);
    if (want.xmlPath !== undefined) expect(found?.position.xmlPath).toBe(want.xmlPath);
  });

  it("checks NbOfTxs against what the file holds, at the end of the stream", () => {
    const result = read(fixture("bad/pacs008-nboftxs-7-of-8.xml"));
    expect(result.transactions).toHaveLength(8);
    const last = result.events.findIndex((e) => e.type === "finding");
    expect(result.events.slice(0, last).filter((e) => e.type === "transaction")).toHaveLength(8);
  });

  it("adds CtrlSum exactly across currencies without floats", () => {
    const ok = read(pacs008([creditTransaction({ amount: "0.10", currency: "EUR" }), creditTransaction({ amount: "0.20", currency: "USD" })], { ctrlSum: "0.3" }));
    expect(ok.allFindings).toEqual([]);
    const off = read(pacs008([creditTransaction({ amount: "0.10" }), creditTransaction({ amount: "0.20" })], { ctrlSum: "0.31" }));
    expect(off.fileFindings[0]).toMatchObject({ code: "ISO20022_CTRLSUM_MISMATCH", severity: "error", scope: "file" });
  });

  it("checks NbOfTxs and CtrlSum of each pain.001 payment-information block", () => {
    const xml = fixture("pain001-v03.xml").toString("utf8").replace("<NbOfTxs>2</NbOfTxs>", "<NbOfTxs>3</NbOfTxs>");
    const result = read(xml);
    expect(result.fileFindings).toEqual([expect.objectContaining({ code: "ISO20022_NBOFTXS_MISMATCH", position: { xmlPath: "/Document/CstmrCdtTrfInitn/PmtInf[1]/NbOfTxs" } })]);
  });

  it("classifies a bad transaction's finding as transaction scope and keeps the others clean", () => {
    const result = read(fixture("bad/pacs008-uetr-uppercase.xml"));
    expect(result.transactions[0]?.findings).toEqual([]);
    expect(result.transactions[1]?.findings).toEqual([expect.objectContaining({ code: "ISO20022_UETR_INVALID", scope: "transaction", position: { xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/PmtId/UETR", transactionIndex: 2 } })]);
    expect(result.summary.transactionErrorCount).toBe(1);
  });

  it("accepts a lowercase UUID v4 UETR and refuses a v1 UUID", () => {
    expect(read(pacs008([creditTransaction({ uetr: "8a562c67-ca16-48ba-b074-65581be6f011" })])).allFindings).toEqual([]);
    expect(read(pacs008([creditTransaction({ uetr: "8a562c67-ca16-18ba-b074-65581be6f011" })])).allFindings[0]?.code).toBe("ISO20022_UETR_INVALID");
  });

  it("refuses more decimals than the currency allows instead of rounding", () => {
    const result = read(pacs008([creditTransaction({ amount: "10.001", currency: "EUR" })]));
    expect(result.allFindings[0]).toMatchObject({ code: "AMOUNT_TOO_MANY_DECIMALS", scope: "transaction" });
  });

  it("refuses an amount that is not a plain decimal", () => {
    for (const amount of ["1e3", "-5.00", "1,00", " 1.00"]) {
      expect(read(pacs008([creditTransaction({ amount })])).allFindings[0]?.code).toBe("AMOUNT_INVALID");
    }
  });

  it("reports a missing mandatory group header field at its path", () => {
    const result = read(pacs008([creditTransaction()]).replace("<MsgId>M1</MsgId>", ""));
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_FIELD_MISSING", scope: "file", position: { xmlPath: "/Document/FIToFICstmrCdtTrf/GrpHdr/MsgId" } });
  });

  it("refuses an impossible date", () => {
    const result = read(pacs008([creditTransaction()]).replace("<IntrBkSttlmDt>2025-03-10", "<IntrBkSttlmDt>2025-02-30"));
    expect(result.allFindings[0]).toMatchObject({ code: "ISO20022_FIELD_INVALID", position: { xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmDt" } });
  });

  it("refuses a malformed BIC", () => {
    const result = read(pacs008([creditTransaction()]).replace("BANKDEFFXXX", "bankdeff"));
    expect(result.allFindings[0]?.code).toBe("ISO20022_BIC_INVALID");
  });
});
