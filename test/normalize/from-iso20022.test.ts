import { describe, expect, it } from "vitest";
import { normalizeIso20022Transaction } from "../../src/normalize/from-iso20022.ts";
import type { CanonicalRecord } from "../../src/normalize/canonical-record.ts";
import { creditTransaction, fixture, pacs008, read } from "../protocols/iso20022/helpers.ts";

function records(bytes: Buffer | string): CanonicalRecord[] {
  const result = read(bytes);
  if (!result.header) throw new Error("fixture has a header");
  const header = result.header;
  return result.transactions.map((transaction) => {
    const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: "t1", fileId: "f1" });
    if (!normalized.ok) throw new Error(JSON.stringify(normalized.error));
    return normalized.value;
  });
}

describe("ISO 20022 transaction -> CanonicalRecord", () => {
  it("takes a pacs.008's IntrBkSttlmDt as its settlement date (docs/decisions/0101)", () => {
    const bytes = pacs008([creditTransaction({ uetr: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e91" })])
      .replace("<IntrBkSttlmDt>2025-03-10</IntrBkSttlmDt>", "<IntrBkSttlmDt>2025-03-12</IntrBkSttlmDt>");
    expect(records(bytes)[0]).toMatchObject({ valueDate: "2025-03-12", settlementDate: "2025-03-12" });
  });

  it("takes a statement entry's BookgDt as its settlement date, not its ValDt", () => {
    const bytes = fixture("camt053-statement.xml").toString("utf8")
      .replace("<ValDt><Dt>2025-03-10</Dt></ValDt>", "<ValDt><Dt>2025-03-07</Dt></ValDt>");
    expect(records(bytes)[0]).toMatchObject({ valueDate: "2025-03-07", settlementDate: "2025-03-10" });
  });

  it("keys a pacs.008 by UETR + instructing agent + instructed agent", () => {
    const [first] = records(fixture("pacs008-multi.xml"));
    expect(first).toMatchObject({ channel: "iso20022", kind: "credit", naturalKey: "iso20022:pacs.008:uetr:3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90:BANKDEFFXXX:BANKGB2LXXX", intentId: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90", amount: 100000n, currency: "EUR", valueDate: "2025-03-10", source: { fileId: "f1", position: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]" } });
  });

  it("keys a pacs.008 without UETR by instructing agent + TxId, leading zeros kept", () => {
    expect(records(fixture("pacs008-multi.xml"))[2]?.naturalKey).toBe("iso20022:pacs.008:txid:BANKDEFFXXX:000TX3");
  });

  it("keys a pacs.008 with neither UETR nor TxId by instructing agent + MsgId + EndToEndId + InstrId", () => {
    const [record] = records(pacs008([creditTransaction({ endToEndId: "E2E-9" }).replace("<PmtId>", "<PmtId><InstrId>0007</InstrId>")]));
    expect(record?.naturalKey).toBe("iso20022:pacs.008:msg:BANKDEFFXXX:M1:E2E-9:0007");
  });

  it("never uses NOTPROVIDED as a key part", () => {
    const [record] = records(pacs008([creditTransaction({ endToEndId: "NOTPROVIDED", txId: "TX9" })]));
    expect(record?.naturalKey).toBe("iso20022:pacs.008:txid:BANKDEFFXXX:TX9");
    expect(record?.intentId).toBe("TX9");
    const refused = read(pacs008([creditTransaction({ endToEndId: "NOTPROVIDED" })]));
    const normalized = refused.header && refused.transactions[0] ? normalizeIso20022Transaction(refused.header, refused.transactions[0], { tenantId: "t1" }) : undefined;
    expect(normalized?.ok ? "ok" : normalized?.error[0]?.code).toBe("ISO20022_KEY_UNAVAILABLE");
  });

  it("converts amounts exactly with the currency's exponent", () => {
    expect(records(fixture("pacs008-multi.xml")).map((r) => [r.amount, r.currency])).toEqual([[100000n, "EUR"], [150000n, "JPY"], [50n, "USD"]]);
  });

  it("gives a corrected re-send with a new MsgId the same keys, and a changed fingerprint only where the content changed", () => {
    const original = records(fixture("pacs008-multi.xml"));
    const resent = records(fixture("pacs008-multi-resend.xml"));
    expect(resent.map((r) => r.naturalKey)).toEqual(original.map((r) => r.naturalKey));
    expect(resent.map((r, i) => r.fingerprint === original[i]?.fingerprint)).toEqual([true, true, false]);
  });

  it("gives each leg of a chain with one UETR its own key", () => {
    const [ab] = records(fixture("pacs008-chain-a-b.xml"));
    const [bc] = records(fixture("pacs008-chain-b-c.xml"));
    expect(ab?.intentId).toBe(bc?.intentId);
    expect(ab?.naturalKey).not.toBe(bc?.naturalKey);
  });

  it("gives two different payments reusing one UETR between the same agents one key and different fingerprints (a conflict)", () => {
    const [a] = records(pacs008([creditTransaction({ endToEndId: "ONE", uetr: "8a562c67-ca16-48ba-b074-65581be6f011" })]));
    const [b] = records(pacs008([creditTransaction({ endToEndId: "TWO", uetr: "8a562c67-ca16-48ba-b074-65581be6f011" })]));
    expect(a?.naturalKey).toBe(b?.naturalKey);
    expect(a?.fingerprint).not.toBe(b?.fingerprint);
  });

  it("keys a pain.001 by initiating party + debtor account + PmtInfId + EndToEndId, plus UETR when present", () => {
    const [withUetr, plain] = records(fixture("pain001-v09.xml"));
    expect(plain?.naturalKey).toBe("iso20022:pain.001:ACME-0042:DE89370400440532013000:PMTINF-001:ACME-E2E-0002");
    expect(withUetr?.naturalKey).toBe("iso20022:pain.001:ACME-0042:DE89370400440532013000:PMTINF-001:ACME-E2E-0001:0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0");
    expect(plain).toMatchObject({ kind: "initiation", amount: 20000n, valueDate: "2025-03-11" });
  });

  it("keys a pacs.004 by instructing agent + RtrId and links it to the pacs.008 it returns", () => {
    const [credit] = records(fixture("pacs008-multi.xml"));
    const [returned] = records(fixture("pacs004-return.xml"));
    expect(returned).toMatchObject({ kind: "return", naturalKey: "iso20022:pacs.004:BANKGB2LXXX:RTR-0001", original: credit?.naturalKey, amount: 100000n, valueDate: "2025-03-12" });
  });

  it("turns a pacs.002 into status events of their originals", () => {
    const credits = records(fixture("pacs008-multi.xml"));
    const statuses = records(fixture("pacs002-status.xml"));
    expect(statuses.map((s) => [s.kind, s.attributes["status"], s.original])).toEqual([["status", "ACSC", credits[0]?.naturalKey], ["status", "RJCT", credits[2]?.naturalKey]]);
    expect(statuses[1]?.attributes["reason"]).toBe("AC01");
    expect(statuses[0]?.amount).toBe(0n);
  });

  it("turns a camt.056 into a cancellation case of its original", () => {
    const credits = records(fixture("pacs008-multi.xml"));
    const [cancellation] = records(fixture("camt056-cancellation.xml"));
    expect(cancellation).toMatchObject({ kind: "cancellation", naturalKey: "iso20022:camt.056:BANKDEFFXXX:CXL-0001", original: credits[1]?.naturalKey, amount: 150000n, currency: "JPY" });
  });

  it("turns camt.053 entries into statement entries keyed by account and references", () => {
    const entries = records(fixture("camt053-statement.xml"));
    expect(entries.map((e) => [e.naturalKey, e.amount, e.attributes["creditDebitIndicator"]])).toEqual([
      ["iso20022:camt.053:GB29NWBK60161331926819:SVC-000001:0001", 100000n, "CRDT"],
      ["iso20022:camt.053:GB29NWBK60161331926819:SVC-000002:0002", 7500n, "DBIT"],
      ["iso20022:camt.053:GB29NWBK60161331926819:SVC-000003:0003", 25n, "DBIT"],
    ]);
  });

  it("escapes a colon inside an identifier so two keys cannot collide", () => {
    const [a] = records(pacs008([creditTransaction({ txId: "A:B" })]));
    expect(a?.naturalKey).toBe("iso20022:pacs.008:txid:BANKDEFFXXX:A%3AB");
  });

  it("does not normalize a transaction that carries a reader error", () => {
    const result = read(fixture("bad/pacs008-too-many-decimals.xml"));
    const normalized = result.header && result.transactions[0] ? normalizeIso20022Transaction(result.header, result.transactions[0], { tenantId: "t1" }) : undefined;
    expect(normalized?.ok ? "ok" : normalized?.error.map((f) => f.code)).toEqual(["AMOUNT_TOO_MANY_DECIMALS"]);
  });
});
