import { describe, expect, it } from "vitest";
import { readIso20022 } from "../../../src/protocols/iso20022/reader.ts";
import { collect, creditTransaction, fixture, pacs008, read } from "./helpers.ts";

describe("ISO 20022 streaming reader", () => {
  it("reads every transaction of a multi-transaction pacs.008 with its identifiers as written", () => {
    const result = read(fixture("pacs008-multi.xml"));
    expect(result.header?.message.id).toBe("pacs.008.001.08");
    expect(result.header?.values["MsgId"]).toBe("CLR-20250310-0001");
    expect(result.transactions.map((t) => t.values["InstrId"])).toEqual(["000123", "000124", "000125"]);
    expect(result.transactions.map((t) => t.values["TxId"])).toEqual(["TX0001", "TX0002", "000TX3"]);
    expect(result.transactions[0]?.values["UETR"]).toBe("3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90");
    expect(result.allFindings).toEqual([]);
    expect(result.summary).toMatchObject({ transactionCount: 3, complete: true, fileErrorCount: 0 });
  });

  it("keeps amounts as the decimal text with their Ccy attribute, never a number", () => {
    const result = read(fixture("pacs008-multi.xml"));
    expect(result.transactions.map((t) => [t.values["IntrBkSttlmAmt"], t.values["IntrBkSttlmAmt@Ccy"]])).toEqual([["1000.00", "EUR"], ["150000", "JPY"], ["0.50", "USD"]]);
  });

  it("decodes entities in values", () => {
    const result = read(fixture("pacs008-multi.xml"));
    expect(result.transactions[0]?.values["DbtrNm"]).toBe("Debtor & Sons GmbH");
  });

  it("gives each transaction an xmlPath with its index", () => {
    const result = read(fixture("pacs008-multi.xml"));
    expect(result.transactions.map((t) => t.xmlPath)).toEqual([1, 2, 3].map((i) => `/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[${i}]`));
    expect(result.transactions[2]?.xmlPaths["IntrBkSttlmAmt"]).toBe("/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]/IntrBkSttlmAmt");
  });

  it("carries the payment-information context on each pain.001 transaction", () => {
    const result = read(fixture("pain001-v03.xml"));
    expect(result.transactions.map((t) => [t.context?.values["PmtInfId"], t.values["EndToEndId"], t.xmlPath])).toEqual([
      ["PMTINF-001", "ACME-E2E-0001", "/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]"],
      ["PMTINF-001", "ACME-E2E-0002", "/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[2]"],
      ["PMTINF-002", "ACME-E2E-0003", "/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf[1]"],
    ]);
    expect(result.allFindings).toEqual([]);
  });

  it("reads pain.001.001.09 with the paths its version maps (BICFI, ReqdExctnDt/Dt, UETR)", () => {
    const result = read(fixture("pain001-v09.xml"));
    expect(result.header?.message.id).toBe("pain.001.001.09");
    expect(result.transactions[0]?.context?.values["ReqdExctnDt"]).toBe("2025-03-11");
    expect(result.transactions[0]?.context?.values["DbtrAgtBIC"]).toBe("BANKDEFFXXX");
    expect(result.transactions[0]?.values["UETR"]).toBe("0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0");
    expect(result.allFindings).toEqual([]);
  });

  it("reads pain.001.001.03 with its own paths (BIC, ReqdExctnDt as a date)", () => {
    const result = read(fixture("pain001-v03.xml"));
    expect(result.transactions[0]?.context?.values["ReqdExctnDt"]).toBe("2025-03-11");
    expect(result.transactions[0]?.context?.values["DbtrAgtBIC"]).toBe("BANKDEFFXXX");
  });

  it("reads status, return, cancellation and statement messages with their original identifiers", () => {
    const status = read(fixture("pacs002-status.xml"));
    expect(status.transactions.map((t) => [t.values["OrgnlTxId"], t.values["TxSts"], t.values["StsRsnCd"]])).toEqual([["TX0001", "ACSC", undefined], ["000TX3", "RJCT", "AC01"]]);
    const returned = read(fixture("pacs004-return.xml"));
    expect(returned.transactions[0]?.values).toMatchObject({ RtrId: "RTR-0001", OrgnlInstrId: "000123", OrgnlUETR: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90" });
    const cancelled = read(fixture("camt056-cancellation.xml"));
    expect(cancelled.transactions[0]?.values).toMatchObject({ CxlId: "CXL-0001", OrgnlTxId: "TX0002", OrgnlIntrBkSttlmAmt: "150000" });
    const statement = read(fixture("camt053-statement.xml"));
    expect(statement.transactions.map((t) => t.values["NtryRef"])).toEqual(["0001", "0002", "0003"]);
    expect(statement.transactions[0]?.context?.values["ElctrncSeqNb"]).toBe("0042");
    for (const result of [status, returned, cancelled, statement]) expect(result.allFindings).toEqual([]);
  });

  it("finds the Document inside a SWIFT envelope with an AppHdr and reads the header", () => {
    const result = read(fixture("bad/pacs008-apphdr-mismatch.xml"));
    expect(result.header?.wrapper).toEqual(["Envelope"]);
    expect(result.header?.appHeader?.values).toMatchObject({ BizMsgIdr: "ENV-0001", FrBIC: "BANKDEFFXXX" });
    expect(result.transactions).toHaveLength(1);
  });

  it("uses the namespace and warns when the AppHdr MsgDefIdr names another message", () => {
    const result = read(fixture("bad/pacs008-apphdr-mismatch.xml"));
    expect(result.header?.message.id).toBe("pacs.008.001.08");
    expect(result.fileFindings).toEqual([expect.objectContaining({ code: "ISO20022_APPHDR_MISMATCH", severity: "warning", scope: "file", position: { xmlPath: "/Envelope/AppHdr/MsgDefIdr" } })]);
  });

  it("detects the message from a prefixed Document namespace", () => {
    const xml = `<x:Document xmlns:x="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><x:FIToFICstmrCdtTrf><x:GrpHdr><x:MsgId>P1</x:MsgId><x:CreDtTm>2025-03-10T09:00:00Z</x:CreDtTm><x:NbOfTxs>0</x:NbOfTxs><x:SttlmInf><x:SttlmMtd>INDA</x:SttlmMtd></x:SttlmInf></x:GrpHdr></x:FIToFICstmrCdtTrf></x:Document>`;
    const result = read(xml);
    expect(result.header?.values["MsgId"]).toBe("P1");
    expect(result.summary.complete).toBe(true);
  });

  it("detects a national variant namespace such as the Swiss pain.001.001.03.ch.02", () => {
    const xml = fixture("pain001-v03.xml").toString("utf8").replace("urn:iso:std:iso:20022:tech:xsd:pain.001.001.03", "http://www.six-interbank-clearing.com/de/pain.001.001.03.ch.02.xsd");
    const result = read(xml);
    expect(result.header?.message).toMatchObject({ id: "pain.001.001.03", localVariant: ".ch.02" });
    expect(result.transactions).toHaveLength(3);
  });

  it.each(["08", "09", "10", "11", "12", "13"])("reads pacs.008.001.%s through the mapping", (version) => {
    const result = read(pacs008([creditTransaction()], { version }));
    expect(result.header?.message.id).toBe(`pacs.008.001.${version}`);
    expect(result.transactions[0]?.values["EndToEndId"]).toBe("E2E");
  });

  it("streams the same events from chunks of any size as from one buffer", async () => {
    const bytes = fixture("pain001-v09.xml");
    const whole = read(bytes).events;
    async function* chunks(size: number): AsyncGenerator<Buffer> {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    }
    for (const size of [1, 7, 64, 1000]) {
      const events = [];
      for await (const event of readIso20022(chunks(size))) events.push(event);
      expect(collect(events).events).toEqual(whole);
    }
  });

  it("refuses a Document in an unknown namespace", () => {
    const result = read(`<Document xmlns="urn:example:other"><A/></Document>`);
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_MESSAGE_UNKNOWN", scope: "file" });
    expect(result.summary.complete).toBe(false);
  });

  it("refuses a supported family in an unmapped version", () => {
    const result = read(fixture("bad/pacs008-unsupported-version.xml"));
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_VERSION_UNSUPPORTED", position: { xmlPath: "/Document" } });
  });

  it("refuses a message family clearline does not read", () => {
    const result = read(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:acmt.023.001.02"><IdVrfctnReq/></Document>`);
    expect(result.fileFindings[0]?.code).toBe("ISO20022_MESSAGE_UNSUPPORTED");
  });

  it("reports a file without a Document", () => {
    expect(read(`<Envelope><Other/></Envelope>`).fileFindings[0]?.code).toBe("ISO20022_DOCUMENT_MISSING");
  });

  it("reports a Document whose root is not the one its namespace announces", () => {
    const result = read(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><PmtRtr/></Document>`);
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_ROOT_UNEXPECTED", position: { xmlPath: "/Document/PmtRtr" } });
  });

  it("reports malformed XML with a line and column", () => {
    const result = read(fixture("bad/pacs008-truncated.xml"));
    expect(result.fileFindings.at(-1)?.code).toBe("ISO20022_XML_MALFORMED");
    expect(result.summary.complete).toBe(false);
  });

  it("refuses an encoding other than UTF-8", () => {
    const result = read(`<?xml version="1.0" encoding="ISO-8859-1"?>${pacs008([creditTransaction()])}`);
    expect(result.fileFindings[0]?.code).toBe("ISO20022_ENCODING_UNSUPPORTED");
  });

  it("refuses bytes that are not UTF-8", () => {
    const bytes = Buffer.concat([Buffer.from(pacs008([creditTransaction({ endToEndId: "AB" })]).replace("AB", "A")), Buffer.from([0xff, 0xfe])]);
    expect(read(bytes).fileFindings[0]?.code).toBe("ISO20022_ENCODING_UNSUPPORTED");
  });

  it("reports an empty input", () => {
    expect(read(Buffer.alloc(0)).fileFindings[0]?.code).toBe("INPUT_EMPTY");
  });
});
