import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, givenScene, ingest, noOutcomes, transferCount } from "./support.ts";

/**
 * Legs of one cross-border (CBPR+) payment whose agents deducted charges (docs/decisions/0108):
 * the same UETR and EndToEndId, other agents, the same InstdAmt 1365.00 USD, and a settlement
 * amount lower at each hop by the charges ChrgsInf lists. Written here in that shape.
 */
const UETR = "5d1f3c2a-9b8e-4f7a-a6c5-0e1d2c3b4a59";

interface Leg {
  msgId: string; from: string; to: string; settlement: string; instructed?: string;
  charges?: Array<[string, string]>;   // [amount, agent BIC]
  endToEndId?: string;
}

function leg(l: Leg): string {
  const charges = (l.charges ?? []).map(([amount, agent]) =>
    `<ChrgsInf><Amt Ccy="USD">${amount}</Amt><Agt><FinInstnId><BICFI>${agent}</BICFI>`
    + "</FinInstnId></Agt></ChrgsInf>").join("\n      ");
  return `
    <CdtTrfTxInf>
      <PmtId>
        <InstrId>${l.msgId}-I</InstrId>
        <EndToEndId>${l.endToEndId ?? "E2E-CBPR-1"}</EndToEndId>
        <TxId>${l.msgId}-T</TxId>
        <UETR>${UETR}</UETR>
      </PmtId>
      <IntrBkSttlmAmt Ccy="USD">${l.settlement}</IntrBkSttlmAmt>
      <IntrBkSttlmDt>2026-12-07</IntrBkSttlmDt>
      ${l.instructed === undefined ? "" : `<InstdAmt Ccy="USD">${l.instructed}</InstdAmt>`}
      <ChrgBr>SHAR</ChrgBr>
      ${charges}
      <InstgAgt><FinInstnId><BICFI>${l.from}</BICFI></FinInstnId></InstgAgt>
      <InstdAgt><FinInstnId><BICFI>${l.to}</BICFI></FinInstnId></InstdAgt>
      <Dbtr><Nm>Debtor</Nm></Dbtr>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></DbtrAgt>
      <CdtrAgt><FinInstnId><BICFI>BANKUS33XXX</BICFI></FinInstnId></CdtrAgt>
      <Cdtr><Nm>Creditor</Nm></Cdtr>
      <CdtrAcct><Id><Othr><Id>123456789</Id></Othr></Id></CdtrAcct>
    </CdtTrfTxInf>`;
}

function pacs008(msgId: string, legs: Leg[]): Buffer {
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">
  <FIToFICstmrCdtTrf>
    <GrpHdr>
      <MsgId>${msgId}</MsgId>
      <CreDtTm>2026-12-07T09:00:00Z</CreDtTm>
      <NbOfTxs>${legs.length}</NbOfTxs>
      <SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf>
    </GrpHdr>${legs.map(leg).join("")}
  </FIToFICstmrCdtTrf>
</Document>
`, "utf8");
}

// A (BANKDEFF) -> B (BANKGB2L) -> C (BANKUS33): B deducts 10.00, C deducts 15.00.
const hopAB: Leg = { msgId: "AB", from: "BANKDEFFXXX", to: "BANKGB2LXXX", settlement: "1365.00",
  instructed: "1365.00" };
const hopBC: Leg = { msgId: "BC", from: "BANKGB2LXXX", to: "BANKUS33XXX", settlement: "1355.00",
  instructed: "1365.00", charges: [["10.00", "BANKGB2LXXX"]] };
const hopCD: Leg = { msgId: "CD", from: "BANKUS33XXX", to: "BANKUS44XXX", settlement: "1340.00",
  instructed: "1365.00", charges: [["10.00", "BANKGB2LXXX"], ["15.00", "BANKUS33XXX"]] };

describe("legs of one cross-border payment whose agents deducted charges", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function outcomes(tenantId: string, fileId: string) {
    const { rows } = await db.pool.query<{ outcome: string; code: string | null;
      detail: string | null; }>(
      `SELECT outcome, code, detail FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
        ORDER BY record_index`, [tenantId, fileId]);
    return rows;
  }

  it("links each later hop from another file to the first, posting the first hop's money once",
    async () => {
      const scene = await givenScene(db.pool, "cbpr-files");
      const first = await ingest(db.pool, scene, pacs008("AB", [hopAB]), "ab.xml");
      expect(first.outcomes).toEqual({ ...noOutcomes, applied: 1 });
      for (const [name, hop] of [["bc.xml", hopBC], ["cd.xml", hopCD]] as const) {
        const later = await ingest(db.pool, scene, pacs008(hop.msgId, [hop]), name);
        expect(later.outcomes).toEqual({ ...noOutcomes, applied: 1 });
        const [row] = await outcomes(scene.tenantId, later.file_id);
        expect(row).toMatchObject({ outcome: "applied", code: "RECORD_PAYMENT_LEG_LINKED" });
        expect(row?.detail).toContain(`this leg settles ${hop === hopBC ? 135_500 : 134_000}`);
      }
      expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
      expect((await balances(db.pool, scene.tenantId))[`partner.${scene.partner.name}.settlement.USD`])
        .toBe(136_500n);
    });

  it("links the hops inside one file the same way", async () => {
    const scene = await givenScene(db.pool, "cbpr-one-file");
    const report = await ingest(db.pool, scene, pacs008("CHAIN", [hopAB, hopBC, hopCD]), "c.xml");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 3 });
    expect((await outcomes(scene.tenantId, report.file_id)).map((r) => r.code)).toEqual([
      "RECORD_COUNTERPARTY_UNRESOLVED", "RECORD_PAYMENT_LEG_LINKED", "RECORD_PAYMENT_LEG_LINKED",
    ]);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
  });

  it("holds a hop whose instructed amount differs: the UETR names another payment", async () => {
    const scene = await givenScene(db.pool, "cbpr-other-instructed");
    await ingest(db.pool, scene, pacs008("AB", [hopAB]), "ab.xml");
    const other = { ...hopBC, msgId: "BX", instructed: "1400.00", settlement: "1390.00" };
    const held = await ingest(db.pool, scene, pacs008("BX", [other]), "bx.xml");
    expect(held.outcomes).toEqual({ ...noOutcomes, suspect: 1 });
    const [row] = await outcomes(scene.tenantId, held.file_id);
    expect(row).toMatchObject({ outcome: "suspect", code: "RECORD_UETR_REUSED" });
    expect(row?.detail).toMatch(/differs in instructedAmount$/);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(1);
  });

  it("holds a hop whose settlement amount and charges do not make its instructed amount",
    async () => {
      const scene = await givenScene(db.pool, "cbpr-not-adding-up");
      await ingest(db.pool, scene, pacs008("AB", [hopAB]), "ab.xml");
      const short = { ...hopBC, msgId: "BS", settlement: "1350.00" };   // 1350 + 10 is not 1365
      const held = await ingest(db.pool, scene, pacs008("BS", [short]), "bs.xml");
      expect(held.outcomes).toEqual({ ...noOutcomes, suspect: 1 });
      const [row] = await outcomes(scene.tenantId, held.file_id);
      expect(row?.detail).toMatch(/differs in charges$/);
      // 1355.00 without the 10.00 that makes it 1365.00 (to another agent: another key)
      const noCharges = { ...hopBC, msgId: "BN", to: "BANKUS55XXX", charges: [] };
      const alsoHeld = await ingest(db.pool, scene, pacs008("BN", [noCharges]), "bn.xml");
      expect(alsoHeld.outcomes).toEqual({ ...noOutcomes, suspect: 1 });
    });

  it("compares settlement amounts, as before, when a hop states no instructed amount", async () => {
    const scene = await givenScene(db.pool, "cbpr-no-instructed");
    await ingest(db.pool, scene, pacs008("AB", [hopAB]), "ab.xml");
    const bare = { ...hopBC, msgId: "BB" };
    delete bare.instructed;
    const held = await ingest(db.pool, scene, pacs008("BB", [bare]), "bb.xml");
    expect(held.outcomes).toEqual({ ...noOutcomes, suspect: 1 });
    const [row] = await outcomes(scene.tenantId, held.file_id);
    expect(row?.detail).toMatch(/differs in amountMinor$/);
  });
});
