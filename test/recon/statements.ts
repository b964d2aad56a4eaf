/** Statements written for the tests: camt.053 documents built from a few lines of description. */
export interface EntrySpec {
  amount: string;                 // decimal, e.g. "125.00"
  direction?: "CRDT" | "DBIT";
  date: string;                   // booking date
  svcrRef: string;                // the bank's AcctSvcrRef
  endToEndId?: string;
  status?: "BOOK" | "PDNG";
  parts?: Array<{ amount: string; endToEndId: string }>;
  info?: string;
  /**
   * Booked in another currency: Ntry/Amt is this, and `amount` (USD) is what the entry's AmtDtls
   * give as the instructed amount, unless `instructed` is false.
   */
  foreign?: { amount: string; currency: string; rate?: string; instructed?: boolean };
}

function foreignDetails(entry: EntrySpec): string {
  const f = entry.foreign;
  if (!f) return "";
  const exchange = f.rate ? `<CcyXchg><SrcCcy>USD</SrcCcy><TrgtCcy>${f.currency}</TrgtCcy><XchgRate>${f.rate}</XchgRate></CcyXchg>` : "";
  const instructed = f.instructed === false ? "" : `<InstdAmt><Amt Ccy="USD">${entry.amount}</Amt></InstdAmt>`;
  const refs = entry.endToEndId ? `<Refs><EndToEndId>${entry.endToEndId}</EndToEndId></Refs>` : "";
  return `<NtryDtls><TxDtls>${refs}<AmtDtls>${instructed}<TxAmt><Amt Ccy="${f.currency}">${f.amount}</Amt>${exchange}</TxAmt></AmtDtls></TxDtls></NtryDtls>`;
}

function txDetails(entry: EntrySpec): string {
  if (entry.foreign) return foreignDetails(entry);
  const parts = entry.parts ?? (entry.endToEndId ? [{ amount: entry.amount, endToEndId: entry.endToEndId }] : []);
  if (parts.length === 0) return "";
  const batch = entry.parts ? `<Btch><NbOfTxs>${parts.length}</NbOfTxs></Btch>` : "";
  return `<NtryDtls>${batch}${parts.map((p) => `<TxDtls><Refs><EndToEndId>${p.endToEndId}</EndToEndId></Refs><Amt Ccy="USD">${p.amount}</Amt></TxDtls>`).join("")}</NtryDtls>`;
}

function entryXml(entry: EntrySpec): string {
  const amount = entry.foreign ? `<Amt Ccy="${entry.foreign.currency}">${entry.foreign.amount}</Amt>` : `<Amt Ccy="USD">${entry.amount}</Amt>`;
  return `<Ntry>${amount}<CdtDbtInd>${entry.direction ?? "CRDT"}</CdtDbtInd><Sts><Cd>${entry.status ?? "BOOK"}</Cd></Sts>`
    + `<BookgDt><Dt>${entry.date}</Dt></BookgDt><ValDt><Dt>${entry.date}</Dt></ValDt><AcctSvcrRef>${entry.svcrRef}</AcctSvcrRef>`
    + `<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>${txDetails(entry)}`
    + (entry.info ? `<AddtlNtryInf>${entry.info}</AddtlNtryInf>` : "") + `</Ntry>`;
}

function toMinor(amount: string): bigint {
  const [whole, fraction = ""] = amount.split(".");
  return BigInt(`${whole}${fraction.padEnd(2, "0")}`);
}

function decimal(minor: bigint): string {
  const sign = minor < 0n ? "-" : "";
  const abs = minor < 0n ? -minor : minor;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}

/** A camt.053.001.08 statement whose closing balance is the opening plus its booked entries (unless `closing` says otherwise). */
export function camt053(options: { id: string; opening?: string; entries: EntrySpec[]; closing?: string; date?: string }): Buffer {
  const openingMinor = toMinor(options.opening ?? "1000.00");
  const booked = options.entries.filter((e) => (e.status ?? "BOOK") === "BOOK")
    .reduce((sum, e) => sum + (e.direction === "DBIT" ? -toMinor(e.amount) : toMinor(e.amount)), 0n);
  const closing = options.closing ?? decimal(openingMinor + booked);
  const date = options.date ?? options.entries[0]?.date ?? "2026-12-01";
  const balance = (code: string, amount: string) => {
    const negative = amount.startsWith("-");
    return `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="USD">${negative ? amount.slice(1) : amount}</Amt><CdtDbtInd>${negative ? "DBIT" : "CRDT"}</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>`;
  };
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>MSG-${options.id}</MsgId><CreDtTm>${date}T18:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>${options.id}</Id><CreDtTm>${date}T18:00:00Z</CreDtTm><Acct><Id><Othr><Id>987654321</Id></Othr></Id><Ccy>USD</Ccy></Acct>
${balance("OPBD", decimal(openingMinor))}${balance("CLBD", closing)}
${options.entries.map(entryXml).join("\n")}
</Stmt></BkToCstmrStmt></Document>
`, "utf8");
}
