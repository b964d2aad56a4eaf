import { describe, expect, it } from "vitest";
import { inspectIso20022 } from "../../src/normalize/inspect-iso20022.ts";
import { fixture } from "../protocols/iso20022/helpers.ts";

describe("inspect an ISO 20022 file", () => {
  it("reports message type, header, identity and each record's identifiers as strings", () => {
    const report = inspectIso20022(fixture("pacs008-multi.xml"), { fileName: "pacs008-multi.xml" });
    expect(report).toMatchObject({ format: "iso20022", messageType: "pacs.008.001.08", recordCount: 3, findings: [] });
    expect(report.identity).toMatchObject({ MsgId: "CLR-20250310-0001", messageType: "pacs.008.001.08" });
    expect(report.header["NbOfTxs"]).toBe("3");
    expect(report.records[0]).toMatchObject({ kind: "credit", amountMinor: "100000", currency: "EUR", identifiers: { InstrId: "000123", EndToEndId: "E2E-0001", TxId: "TX0001", UETR: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90" } });
  });

  it("lists the original identifiers and the link of a return", () => {
    const report = inspectIso20022(fixture("pacs004-return.xml"));
    expect(report.records[0]?.identifiers).toMatchObject({ RtrId: "RTR-0001", OrgnlMsgId: "CLR-20250310-0001", OrgnlInstrId: "000123", OrgnlEndToEndId: "E2E-0001", OrgnlTxId: "TX0001" });
    expect(report.records[0]?.original).toMatch(/^iso20022:pacs\.008:uetr:/);
  });

  it("lists PmtInfId among a pain.001 transaction's identifiers", () => {
    expect(inspectIso20022(fixture("pain001-v03.xml")).records[2]?.identifiers).toMatchObject({ PmtInfId: "PMTINF-002", EndToEndId: "ACME-E2E-0003" });
  });

  it("reports findings with their xmlPath and counts rejected records", () => {
    const report = inspectIso20022(fixture("bad/pacs008-uetr-uppercase.xml"));
    expect(report.findings).toEqual([expect.objectContaining({ code: "ISO20022_UETR_INVALID", position: expect.objectContaining({ xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/PmtId/UETR" }) })]);
    expect(report.records.map((r) => r.kind)).toEqual(["credit", "rejected"]);
  });

  it("lists at most recordsMax records but counts them all", () => {
    const report = inspectIso20022(fixture("pacs008-multi.xml"), { recordsMax: 1 });
    expect(report.records).toHaveLength(1);
    expect(report.recordCount).toBe(3);
  });

  it("gives the same content hash to a file and its re-wrapped copy", () => {
    const bare = fixture("pacs008-multi.xml");
    const wrapped = Buffer.from(`<Envelope>${bare.toString("utf8").replace(/^<\?xml[^>]*>/, "")}</Envelope>`);
    expect(inspectIso20022(wrapped).contentHash).toBe(inspectIso20022(bare).contentHash);
  });

  it("refuses a DOCTYPE with a typed finding and no records", () => {
    const report = inspectIso20022(fixture("bad/pacs008-billion-laughs.xml"));
    expect(report.findings[0]?.code).toBe("ISO20022_DOCTYPE_REFUSED");
    expect(report.records).toEqual([]);
  });
});
