/** A one-transaction pacs.008 (clearline as the creditor's agent), written per test: what a partner's file says of one payment. */
export function pacs008(tx: { msgId: string; endToEndId: string; amount: string; currency?: string; creditorIban: string; txId?: string }): Buffer {
  const currency = tx.currency ?? "USD";
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">
  <FIToFICstmrCdtTrf>
    <GrpHdr>
      <MsgId>${tx.msgId}</MsgId>
      <CreDtTm>2026-12-03T09:00:00Z</CreDtTm>
      <NbOfTxs>1</NbOfTxs>
      <SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>
      <InstgAgt><FinInstnId><BICFI>BANKUS33XXX</BICFI></FinInstnId></InstgAgt>
      <InstdAgt><FinInstnId><BICFI>CLRLUS33XXX</BICFI></FinInstnId></InstdAgt>
    </GrpHdr>
    <CdtTrfTxInf>
      <PmtId><InstrId>${tx.msgId}-I</InstrId><EndToEndId>${tx.endToEndId}</EndToEndId><TxId>${tx.txId ?? `${tx.msgId}-TX`}</TxId></PmtId>
      <IntrBkSttlmAmt Ccy="${currency}">${tx.amount}</IntrBkSttlmAmt>
      <IntrBkSttlmDt>2026-12-03</IntrBkSttlmDt>
      <ChrgBr>SLEV</ChrgBr>
      <Dbtr><Nm>Debtor</Nm></Dbtr>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId><BICFI>BANKUS33XXX</BICFI></FinInstnId></DbtrAgt>
      <CdtrAgt><FinInstnId><BICFI>CLRLUS33XXX</BICFI></FinInstnId></CdtrAgt>
      <Cdtr><Nm>Creditor</Nm></Cdtr>
      <CdtrAcct><Id><IBAN>${tx.creditorIban}</IBAN></Id></CdtrAcct>
    </CdtTrfTxInf>
  </FIToFICstmrCdtTrf>
</Document>
`);
}
