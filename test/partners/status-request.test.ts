import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { outboundFiles } from "../../src/partners/outbound/outbound-store.ts";
import { readIso20022Sync } from "../../src/protocols/iso20022/reader.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, noOutcomes } from "../files/support.ts";

describe("pacs.028 status requests are answered with a pacs.002 for the payments they name", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("answers each named payment from its recorded state, found by UETR or end-to-end reference, and an unknown reference as rejected", async () => {
    const scene = await givenScene(db.pool, "stsreq");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    const request = await ingest(db.pool, scene, fixture("iso20022/pacs028-status-request.xml"), "pacs028.xml");
    expect(request).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 3 } });

    const [answer] = await outboundFiles(db.pool, scene.tenantId, scene.partner.partnerId, 1);
    const events = readIso20022Sync(answer?.content ?? Buffer.alloc(0));
    const header = events.find((e) => e.type === "header");
    expect(header?.type === "header" ? header.header.values : {}).toMatchObject({ OrgnlMsgId: "CLR-STSREQ-0001", OrgnlMsgNmId: "pacs.028.001.03", GrpSts: "PART" });
    const lines = events.flatMap((e) => (e.type === "transaction" ? [e.transaction] : []));
    expect(lines.flatMap((l) => l.findings).filter((f) => f.severity === "error")).toEqual([]);
    expect(lines.map((l) => ({ e2e: l.values.OrgnlEndToEndId, status: l.values.TxSts, reason: l.values.StsRsnCd })))
      .toEqual([{ e2e: "E2E-0001", status: "ACSC", reason: undefined }, { e2e: "E2E-0002", status: "ACSC", reason: undefined }, { e2e: "E2E-9999", status: "RJCT", reason: "NARR" }]);
  });

  it("answers a pain.001 whose debtor cannot cover two payments with RJCT AM04 for those, and a later pacs.028 about one of them the same way", async () => {
    const scene = await givenScene(db.pool, "stsreq-funds");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "acme-eur", kind: "customer", currency: "EUR" });
    await addAccountAlias(db.pool, scene.tenantId, "iban:DE89370400440532013000", "acme-eur");
    const initiation = await ingest(db.pool, scene, fixture("iso20022/pain001-v09.xml"), "pain001.xml");
    const codes = initiation.errors.map((e) => e.code);
    expect(codes).toEqual(["RECORD_INSUFFICIENT_FUNDS", "RECORD_INSUFFICIENT_FUNDS"]);
    const [report] = await outboundFiles(db.pool, scene.tenantId, scene.partner.partnerId, 1);
    const reportLines = readIso20022Sync(report?.content ?? Buffer.alloc(0)).flatMap((e) => (e.type === "transaction" ? [e.transaction.values] : []));
    expect(reportLines.slice(0, 2).map((l) => [l.OrgnlEndToEndId, l.TxSts, l.StsRsnCd])).toEqual([["ACME-E2E-0001", "RJCT", "AM04"], ["ACME-E2E-0002", "RJCT", "AM04"]]);

    const request = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.028.001.03"><FIToFIPmtStsReq>
  <GrpHdr><MsgId>ACME-STSREQ-1</MsgId><CreDtTm>2025-03-12T09:00:00Z</CreDtTm></GrpHdr>
  <TxInf><StsReqId>R1</StsReqId><OrgnlEndToEndId>ACME-E2E-0002</OrgnlEndToEndId><InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt></TxInf>
</FIToFIPmtStsReq></Document>
`);
    await ingest(db.pool, scene, request, "pacs028.xml");
    const [answer] = await outboundFiles(db.pool, scene.tenantId, scene.partner.partnerId, 1);
    const answerLines = readIso20022Sync(answer?.content ?? Buffer.alloc(0)).flatMap((e) => (e.type === "transaction" ? [e.transaction.values] : []));
    expect(answerLines.map((l) => [l.OrgnlEndToEndId, l.TxSts, l.StsRsnCd])).toEqual([["ACME-E2E-0002", "RJCT", "AM04"]]);
  });
});
