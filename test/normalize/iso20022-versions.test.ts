import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { inspectIso20022 } from "../../src/normalize/inspect-iso20022.ts";
import { supportedVersions } from "../../src/protocols/iso20022/mapping.ts";
import { fixture } from "../protocols/iso20022/helpers.ts";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => String(from + index).padStart(2, "0"));

describe("ISO 20022 versions in use, as mapping data", () => {
  it("maps pacs.008 .02-.13, pacs.002 .03-.14, pacs.004 .02-.13, pain.001 .03-.12, pain.008 .02-.11, camt.053/054 .02-.13", () => {
    expect(supportedVersions("pacs.008")).toEqual(range(2, 13));
    expect(supportedVersions("pacs.002")).toEqual(range(3, 14));
    expect(supportedVersions("pacs.004")).toEqual(range(2, 13));
    expect(supportedVersions("pain.001")).toEqual(range(3, 12));
    expect(supportedVersions("pain.008")).toEqual(range(2, 11));
    expect(supportedVersions("camt.053")).toEqual(range(2, 13));
    expect(supportedVersions("camt.054")).toEqual(range(2, 13));
    expect(supportedVersions("camt.056").length).toBeGreaterThan(0);
    expect(supportedVersions("camt.029").length).toBeGreaterThan(0);
  });

  it("reads a pacs.008.001.07 credit", () => {
    const report = inspectIso20022(fixture("pacs008-v07.xml"));
    expect(report).toMatchObject({ messageType: "pacs.008.001.07", findings: [] });
    expect(report.records).toEqual([expect.objectContaining({ kind: "credit", naturalKey: "iso20022:pacs.008:txid:BANKDEFFXXX:V07-TX-1", amountMinor: "1234", currency: "EUR", valueDate: "2025-04-01" })]);
  });

  it("reads a pacs.008.001.02 whose agents are BIC (not BICFI) and whose settlement date is in the group header", () => {
    const report = inspectIso20022(fixture("pacs008-v02.xml"));
    expect(report).toMatchObject({ messageType: "pacs.008.001.02", findings: [] });
    expect(report.records).toEqual([expect.objectContaining({ naturalKey: "iso20022:pacs.008:txid:BANKDEFFXXX:V02-TX-1", amountMinor: "500", valueDate: "2025-04-02" })]);
  });

  it("reads a camt.054.001.12 notification entry", () => {
    const report = inspectIso20022(fixture("camt054-v12.xml"));
    expect(report).toMatchObject({ messageType: "camt.054.001.12", findings: [] });
    expect(report.records).toEqual([expect.objectContaining({ kind: "notification-entry", naturalKey: "iso20022:camt.054:DE89370400440532013000:SVC-REF-1:N-1", amountMinor: "4200" })]);
  });

  it("reads a pain.008 direct debit: one record per collection, keyed by initiator + creditor account + PmtInfId + EndToEndId", () => {
    const report = inspectIso20022(fixture("pain008-v08.xml"));
    expect(report).toMatchObject({ messageType: "pain.008.001.08", findings: [] });
    expect(report.records.map((record) => [record.kind, record.naturalKey, record.amountMinor, record.valueDate, record.identifiers["MndtId"]])).toEqual([
      ["direct-debit-initiation", "iso20022:pain.008:GYM-0007:DE02120300000000202051:DD-BATCH-1:MEMBER-0001-2025-04", "3990", "2025-04-03", "MANDATE-0001"],
      ["direct-debit-initiation", "iso20022:pain.008:GYM-0007:DE02120300000000202051:DD-BATCH-1:MEMBER-0002-2025-04", "3990", "2025-04-03", "MANDATE-0002"],
    ]);
  });
});

describe("ISO 20022 detection without a namespace", () => {
  it("reads a Document without namespace by its root element, with a warning, as the newest mapped version", () => {
    const report = inspectIso20022(fixture("pain002-no-namespace.xml"));
    expect(report.messageType).toBe("pain.002.001.14");
    expect(report.findings).toEqual([expect.objectContaining({ code: "ISO20022_NAMESPACE_MISSING", severity: "warning", position: { xmlPath: "/Document/CstmrPmtStsRpt" } })]);
    expect(report.records).toEqual([expect.objectContaining({ kind: "status", naturalKey: "iso20022:pain.002:RJCT:ACME-PAIN-09-0001:PMTINF-001:ACME-E2E-0002" })]);
  });

  it("reads a Document without namespace by its AppHdr MsgDefIdr, with a warning", () => {
    const report = inspectIso20022(fixture("pacs008-apphdr-no-namespace.xml"));
    expect(report.messageType).toBe("pacs.008.001.07");
    expect(report.findings).toEqual([expect.objectContaining({ code: "ISO20022_NAMESPACE_MISSING", severity: "warning", valueMasked: "pacs.008.001.07" })]);
    expect(report.records).toEqual([expect.objectContaining({ naturalKey: "iso20022:pacs.008:txid:BANKDEFFXXX:HDR-TX-1", amountMinor: "700" })]);
  });

  it("refuses a Document without namespace whose root is no message it reads", () => {
    const report = inspectIso20022(Buffer.from("<Document><Nothing/></Document>"));
    expect(report.findings).toEqual([expect.objectContaining({ code: "ISO20022_MESSAGE_UNKNOWN" })]);
  });
});

describe("an equivalent amount (Amt/EqvtAmt)", () => {
  it("is read as the amount in its own currency, with the currency of transfer recorded; a debtor account in another currency is rejected, not converted", () => {
    const report = inspectIso20022(fixture("pain001-equivalent-amount.xml"));
    expect(report.records.map((record) => [record.kind, record.amountMinor, record.currency])).toEqual([["initiation", "10000", "EUR"], ["rejected", "0", ""]]);
    expect(report.findings).toEqual([expect.objectContaining({ code: "ISO20022_FX_RATE_UNAVAILABLE", position: expect.objectContaining({ xmlPath: "/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf[1]/Amt/EqvtAmt/Amt" }) })]);
  });
});

describe("the content hash of a refused message", () => {
  it("is the hash of its bytes, never the hash of nothing", () => {
    const refused = Buffer.from('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.999.001.01"><X/></Document>');
    const report = inspectIso20022(refused);
    expect(report.findings[0]?.code).toBe("ISO20022_MESSAGE_UNSUPPORTED");
    expect(report.contentHash).toBe(createHash("sha256").update(refused).digest("hex"));
    expect(report.contentHash).not.toBe(createHash("sha256").digest("hex"));
  });
});
