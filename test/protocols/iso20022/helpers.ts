import { readFileSync } from "node:fs";
import { readIso20022Sync, type ReadOptions } from "../../../src/protocols/iso20022/reader.ts";
import type { Iso20022Event, Iso20022Finding, Iso20022Header, Iso20022Summary, Iso20022Transaction } from "../../../src/protocols/iso20022/types.ts";

export const fixtureDirectory = new URL("../../../fixtures/iso20022/", import.meta.url);

export function fixture(name: string): Buffer {
  return readFileSync(new URL(name, fixtureDirectory));
}

export interface ReadResult {
  header?: Iso20022Header;
  transactions: Iso20022Transaction[];
  fileFindings: Iso20022Finding[];
  allFindings: Iso20022Finding[];
  summary: Iso20022Summary;
  events: Iso20022Event[];
}

export function collect(events: Iso20022Event[]): ReadResult {
  const transactions: Iso20022Transaction[] = [];
  const fileFindings: Iso20022Finding[] = [];
  let header: Iso20022Header | undefined;
  let summary: Iso20022Summary | undefined;
  for (const event of events) {
    if (event.type === "header") header = event.header;
    else if (event.type === "transaction") transactions.push(event.transaction);
    else if (event.type === "finding") fileFindings.push(event.finding);
    else summary = event.summary;
  }
  if (!summary) throw new Error("the reader always ends with an end event");
  const result: ReadResult = { transactions, fileFindings, allFindings: [...fileFindings, ...transactions.flatMap((t) => t.findings)], summary, events };
  if (header) result.header = header;
  return result;
}

export function read(bytes: Buffer | string, options: ReadOptions = {}): ReadResult {
  return collect(readIso20022Sync(typeof bytes === "string" ? Buffer.from(bytes) : bytes, options));
}

/** A minimal well-formed pacs.008.001.08 with the given transactions' inner XML. */
export function pacs008(transactions: string[], header: { nbOfTxs?: string; ctrlSum?: string; version?: string } = {}): string {
  const nb = header.nbOfTxs ?? String(transactions.length);
  const ctrl = header.ctrlSum === undefined ? "" : `<CtrlSum>${header.ctrlSum}</CtrlSum>`;
  return `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.${header.version ?? "08"}"><FIToFICstmrCdtTrf><GrpHdr><MsgId>M1</MsgId><CreDtTm>2025-03-10T09:00:00Z</CreDtTm><NbOfTxs>${nb}</NbOfTxs>${ctrl}<SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr>${transactions.map((t) => `<CdtTrfTxInf>${t}</CdtTrfTxInf>`).join("")}</FIToFICstmrCdtTrf></Document>`;
}

export function creditTransaction(fields: { endToEndId?: string; uetr?: string; txId?: string; amount?: string; currency?: string } = {}): string {
  const uetr = fields.uetr === undefined ? "" : `<UETR>${fields.uetr}</UETR>`;
  const txId = fields.txId === undefined ? "" : `<TxId>${fields.txId}</TxId>`;
  return `<PmtId><EndToEndId>${fields.endToEndId ?? "E2E"}</EndToEndId>${txId}${uetr}</PmtId><IntrBkSttlmAmt Ccy="${fields.currency ?? "EUR"}">${fields.amount ?? "1.00"}</IntrBkSttlmAmt><IntrBkSttlmDt>2025-03-10</IntrBkSttlmDt><InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt><InstdAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></InstdAgt>`;
}
