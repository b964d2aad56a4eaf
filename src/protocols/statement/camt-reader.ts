import { SaxesParser } from "saxes";
import { finding, type Finding } from "../../errors/finding.ts";
import { decimalToMinor } from "../iso4217/currency.ts";
import {
  foreignCurrencyDetail, taggedRef, type AmountDetail, type ExternalEvent, type ExternalItem,
  type ExternalReadLimits, type ExternalStatementHead, type ForeignCurrencyDetail,
} from "./external-item.ts";

/** Reference elements inside TxDtls/Refs and the tag each one gets. */
const refTags: Record<string, string> = {
  EndToEndId: "e2e", UETR: "uetr", InstrId: "instr", TxId: "tx", MsgId: "msg", PmtInfId: "pmtinf",
  AcctSvcrRef: "svcr",
};

interface EntryDraft {
  xmlPath: string;
  // NtryRef, Amt, Amt@Ccy, CdtDbtInd, Sts, BookgDt, ValDt, AcctSvcrRef, AddtlNtryInf
  fields: Record<string, string>;
  parts: Array<{ amount?: string; currency?: string; refs: string[]; remittance?: string }>;
  // AmtDtls amounts of the entry and its transactions (kind, amount, currency), and CcyXchg
  amountDetails: Array<{ kind: string; amount: string; currency: string }>;
  exchange: NonNullable<ForeignCurrencyDetail["exchange"]>;
}

/** AmtDtls/<kind>/Amt, at the entry's level or a transaction's. */
const amountDetailPath = /(?:^|\/)AmtDtls\/(InstdAmt|TxAmt|CntrValAmt|AnncdPstngAmt)\/Amt$/;
/** AmtDtls/<kind>/CcyXchg/<field>: the exchange the bank applied. */
const exchangePath = /(?:^|\/)AmtDtls\/\w+\/CcyXchg\/(SrcCcy|TrgtCcy|XchgRate)$/;
const exchangeFields = {
  SrcCcy: "sourceCurrency", TrgtCcy: "targetCurrency", XchgRate: "rate",
} as const;

interface StatementDraft {
  head: ExternalStatementHead;
  balances: Array<{ code: string; amount: string; currency: string; sign: string }>;
  // booked credits minus debits of this statement's entries
  bookedMinor: bigint;
  balance?: { code?: string; amount?: string; currency?: string; sign?: string };
}

/**
 * A streaming reader of camt.053 statements and camt.054 notifications for reconciliation: one
 * item per Ntry (a batch entry keeps its TxDtls as parts), the statement's account and balances.
 * Opening (OPBD, else PRCD) plus booked entries should equal the closing balance (CLBD); a
 * warning says when they do not. Memory is
 * one entry at a time; a DOCTYPE is refused by the tokenizer's doctype event before any entity.
 */
export class CamtStatementReader {
  private readonly parser = new SaxesParser();
  // streaming: a character split across chunks waits for its rest
  private readonly decoder = new TextDecoder("utf-8");
  private readonly path: string[] = [];
  private readonly counters: Map<string, number>[] = [new Map()];
  private text = "";
  private currency: string | undefined;
  private statement: StatementDraft | undefined;
  private readonly heads: ExternalStatementHead[] = [];
  private entry: EntryDraft | undefined;
  private events: ExternalEvent[] = [];
  private readonly findings: Finding[] = [];
  private items = 0;
  private rootSeen = false;
  stopped = false;

  constructor(private readonly limits: ExternalReadLimits) {
    this.parser.on("doctype", () => this.fatal("RECON_XML_MALFORMED", "a <!DOCTYPE> is refused"));
    // Prefixed names (<ns:Ntry>) are read by their local part: statements come with and without
    // one.
    this.parser.on("opentag", (tag) =>
      this.open(tag.name.replace(/^.*:/, ""), tag.attributes as Record<string, string>),
    );
    this.parser.on("text", (text) => {
      this.text += text;
    });
    this.parser.on("cdata", (text) => {
      this.text += text;
    });
    this.parser.on("closetag", () => this.close());
    this.parser.on("error", (error) => this.fatal("RECON_XML_MALFORMED", error.message));
  }

  push(chunk: Buffer): ExternalEvent[] {
    if (!this.stopped) this.parser.write(this.decoder.decode(chunk, { stream: true }));
    return this.drain();
  }

  finish(): ExternalEvent[] {
    if (!this.stopped) this.parser.write(this.decoder.decode());
    if (!this.stopped) this.parser.close();
    if (!this.stopped && !this.rootSeen) {
      this.fatal(
        "RECON_STATEMENT_NOT_CAMT", "no BkToCstmrStmt or BkToCstmrDbtCdtNtfctn in the document",
      );
    }
    this.events.push({ type: "end", head: this.heads[0] ?? {}, findings: this.findings });
    return this.drain();
  }

  private drain(): ExternalEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  private get xmlPath(): string {
    return "/" + this.path.join("/");
  }

  private open(name: string, attributes: Record<string, string>): void {
    const counter = this.counters[this.counters.length - 1] as Map<string, number>;
    const index = (counter.get(name) ?? 0) + 1;
    counter.set(name, index);
    this.counters.push(new Map());
    this.path.push(index > 1 || name === "Ntry" || name === "TxDtls" ? `${name}[${index}]` : name);
    this.text = "";
    this.currency = attributes.Ccy;
    if (name === "BkToCstmrStmt" || name === "BkToCstmrDbtCdtNtfctn") this.rootSeen = true;
    if ((name === "Stmt" || name === "Ntfctn") && this.rootSeen) {
      this.statement = { head: {}, balances: [], bookedMinor: 0n };
    }
    else if (name === "Bal" && this.statement) this.statement.balance = {};
    else if (name === "Ntry" && this.statement)
      this.entry = {
        xmlPath: this.xmlPath, fields: {}, parts: [], amountDetails: [], exchange: {},
      };
    else if (name === "TxDtls" && this.entry) {
      if (this.entry.parts.length >= this.limits.partsPerItemMax) {
        this.fatal(
          "RECON_PARTS_TOO_MANY", `more than ${this.limits.partsPerItemMax} TxDtls in one entry`,
        );
      }
      else this.entry.parts.push({ refs: [] });
    }
  }

  private close(): void {
    const name = (this.path[this.path.length - 1] ?? "").replace(/\[\d+\]$/, "");
    const text = this.text.trim();
    const relative = this.relativePath();
    if (this.entry) this.closeInEntry(name, relative, text);
    else if (this.statement) this.closeInStatement(name, relative, text);
    this.path.pop();
    this.counters.pop();
    this.text = "";
  }

  /**
   * The path below the innermost Ntry, Bal or Stmt, without indexes: "NtryDtls/TxDtls/Refs/UETR".
   */
  private relativePath(): string {
    const names = this.path.map((p) => p.replace(/\[\d+\]$/, ""));
    const anchor = Math.max(
      names.lastIndexOf("Ntry"), names.lastIndexOf("Bal"), names.lastIndexOf("Stmt"),
      names.lastIndexOf("Ntfctn"),
    );
    return names.slice(anchor).join("/");
  }

  private closeInEntry(name: string, relative: string, text: string): void {
    const entry = this.entry as EntryDraft;
    const part = entry.parts[entry.parts.length - 1];
    noteAmountDetail(entry, relative, text, this.currency);
    if (name === "Ntry" && relative === "Ntry") {
      this.emitEntry(entry);
      this.entry = undefined;
    } else if (part && relative.includes("/TxDtls/")) {
      if (relative.endsWith("/Refs/" + name) && refTags[name]) {
        const ref = taggedRef(refTags[name] as string, text);
        if (ref) part.refs.push(ref);
      } else if (relative.endsWith("TxDtls/Amt") || relative.endsWith("TxDtls/AmtDtls/TxAmt/Amt")) {
        part.amount = text;
        if (this.currency) part.currency = this.currency;
      } else if (relative.endsWith("RmtInf/Ustrd")) part.remittance = text;
    } else {
      const field = entryFields[relative];
      // A container (Sts around Sts/Cd in later versions) closes with no text of its own.
      if (field && text !== "") {
        entry.fields[field] = text;
        if (field === "Amt" && this.currency) entry.fields["Amt@Ccy"] = this.currency;
      }
    }
  }

  private closeInStatement(name: string, relative: string, text: string): void {
    const statement = this.statement as StatementDraft;
    const balance = statement.balance;
    if (balance && relative.startsWith("Bal/")) {
      if (relative === "Bal/Tp/CdOrPrtry/Cd") balance.code = text;
      else if (relative === "Bal/Amt") {
        balance.amount = text;
        if (this.currency) balance.currency = this.currency;
      } else if (relative === "Bal/CdtDbtInd") balance.sign = text;
    } else if (name === "Bal" && balance) {
      if (balance.code && balance.amount && balance.currency) {
        statement.balances.push({
          code: balance.code, amount: balance.amount, currency: balance.currency,
          sign: balance.sign ?? "CRDT",
        });
      }
      statement.balance = undefined;
    } else if (relative === "Stmt/Id" || relative === "Ntfctn/Id") {
      statement.head.statementRef = text;
    }
    else if (relative.endsWith("Acct/Id/IBAN") || relative.endsWith("Acct/Id/Othr/Id"))
      statement.head.accountIdentifier = text;
    else if (relative.endsWith("Acct/Ccy")) statement.head.currency = text;
    else if (name === "Stmt" || name === "Ntfctn") {
      this.checkBalances(statement);
      this.heads.push(statement.head);
      this.statement = undefined;
    }
  }

  private emitEntry(entry: EntryDraft): void {
    if (this.items >= this.limits.itemsMax) {
      this.fatal("RECON_ENTRIES_TOO_MANY", `more than ${this.limits.itemsMax} entries`);
      return;
    }
    const head = this.statement?.head;
    const item = itemOfEntry(entry, head?.statementRef ?? "", this.items + 1, (f) =>
      this.addFinding(f),
    );
    if (!item) return;
    this.items++;
    if (head?.currency !== undefined && item.currency !== head.currency) {
      item.foreign = foreignOf(entry, head.currency, (f) => this.addFinding(f));
    }
    // An entry in another currency counts at its amount in the account's, when it has one
    // (decision 0104); without one it cannot be counted.
    const bookedMinor = item.foreign ? item.foreign.accountAmountMinor : item.amountMinor;
    if (item.status === "booked" && this.statement && bookedMinor !== undefined) {
      this.statement.bookedMinor += item.direction === "C" ? bookedMinor : -bookedMinor;
    }
    this.events.push({ type: "item", item });
  }

  private checkBalances(statement: StatementDraft): void {
    const opening =
      statement.balances.find((b) => b.code === "OPBD") ??
      statement.balances.find((b) => b.code === "PRCD");
    const closing = statement.balances.find((b) => b.code === "CLBD");
    const signed = (b: { amount: string; currency: string; sign: string }): bigint | undefined => {
      const minor = decimalToMinor(b.amount, b.currency);
      return minor.ok ? (b.sign === "DBIT" ? -minor.value : minor.value) : undefined;
    };
    if (opening) {
      const v = signed(opening);
      if (v !== undefined) statement.head.openingMinor = v;
    }
    if (closing) {
      const v = signed(closing);
      if (v !== undefined) statement.head.closingMinor = v;
    }
    const { openingMinor, closingMinor } = statement.head;
    if (
      openingMinor !== undefined && closingMinor !== undefined &&
      openingMinor + statement.bookedMinor !== closingMinor
    ) {
      // A warning, not a refusal: real statements leave entries to another page or statement
      // (public samples do), and the bank's entries are still their side. Imports report it.
      this.addFinding(
        finding(
          "RECON_BALANCE_MISMATCH",
          `statement ${statement.head.statementRef ?? ""}: opening ${openingMinor} plus booked ` +
          `entries ${statement.bookedMinor} is not the closing ${closingMinor} (minor units): ` +
          `entries may be missing`,
          { xmlPath: this.xmlPath }, { severity: "warning" },
        ),
      );
    }
  }

  private addFinding(f: Finding): void {
    if (this.findings.length < this.limits.findingsMax) this.findings.push(f);
  }

  private fatal(
    code:
      | "RECON_XML_MALFORMED"
      | "RECON_STATEMENT_NOT_CAMT"
      | "RECON_ENTRIES_TOO_MANY"
      | "RECON_PARTS_TOO_MANY",
    message: string,
  ): void {
    if (this.stopped) return;
    this.stopped = true;
    this.addFinding(finding(code, message, { xmlPath: this.xmlPath, line: this.parser.line }));
  }
}

/** Entry fields by their path below Ntry. */
const entryFields: Record<string, string> = {
  "Ntry/NtryRef": "NtryRef", "Ntry/Amt": "Amt", "Ntry/CdtDbtInd": "CdtDbtInd",
  "Ntry/RvslInd": "RvslInd", "Ntry/Sts": "Sts", "Ntry/Sts/Cd": "Sts", "Ntry/BookgDt/Dt": "BookgDt",
  "Ntry/BookgDt/DtTm": "BookgDt", "Ntry/ValDt/Dt": "ValDt", "Ntry/ValDt/DtTm": "ValDt",
  "Ntry/AcctSvcrRef": "AcctSvcrRef", "Ntry/AddtlNtryInf": "AddtlNtryInf",
};

function itemOfEntry(
  entry: EntryDraft, statementRef: string, index: number, report: (f: Finding) => void,
): ExternalItem | undefined {
  const f = entry.fields;
  const position = { xmlPath: entry.xmlPath };
  const missing = ["Amt", "Amt@Ccy", "CdtDbtInd"].find((name) => !f[name]);
  if (missing) {
    return void report(finding("RECON_ENTRY_FIELD_MISSING", `entry lacks ${missing}`, position));
  }
  if (f.CdtDbtInd !== "CRDT" && f.CdtDbtInd !== "DBIT") {
    return void report(
      finding(
        "RECON_ENTRY_FIELD_INVALID", `CdtDbtInd ${f.CdtDbtInd} is neither CRDT nor DBIT`, position,
      ),
    );
  }
  const amount = decimalToMinor(f.Amt as string, f["Amt@Ccy"] as string, position);
  if (!amount.ok) return void report(amount.error);
  const status = f.Sts === "PDNG" ? "pending" : "booked";
  const bookingDate = (f.BookgDt ?? f.ValDt)?.slice(0, 10);
  if (!bookingDate || !/^\d{4}-\d{2}-\d{2}$/.test(bookingDate)) {
    return void report(
      finding("RECON_ENTRY_FIELD_MISSING", "entry lacks a booking (or value) date", position),
    );
  }
  // CdtDbtInd is this entry's own direction, reversals included (RvslInd only says that a CRDT
  // undoes an earlier debit, or a DBIT an earlier credit).
  const credit = f.CdtDbtInd === "CRDT";
  const parts = [];
  for (const part of entry.parts) {
    const minor =
      part.amount && part.currency
        ? decimalToMinor(part.amount, part.currency, position)
        : undefined;
    parts.push(minor?.ok ? { amountMinor: minor.value, refs: part.refs } : { refs: part.refs });
  }
  const refs = [
    ...new Set(
      [
        taggedRef("svcr", f.AcctSvcrRef), taggedRef("ntry", f.NtryRef),
        ...(parts.length === 1 ? (parts[0]?.refs ?? []) : []),
      ].filter((r): r is string => r !== undefined),
    ),
  ];
  const itemKey = f.AcctSvcrRef
    ? `svcr:${f.AcctSvcrRef}`
    : f.NtryRef
      ? `ntry:${statementRef}:${f.NtryRef}`
      : `pos:${statementRef}:${index}`;
  const description = f.AddtlNtryInf ?? entry.parts[0]?.remittance;
  return {
    itemKey, position: entry.xmlPath, bookingDate,
    ...(f.ValDt ? { valueDate: f.ValDt.slice(0, 10) } : {}), direction: credit ? "C" : "D",
    amountMinor: amount.value, currency: f["Amt@Ccy"] as string, status, refs,
    parts: parts.length > 1 ? parts : [], ...(description ? { description } : {}),
  };
}

/** Keeps an AmtDtls amount or exchange field of an entry or its transactions (decision 0104). */
function noteAmountDetail(
  entry: EntryDraft, relative: string, text: string, currency: string | undefined,
): void {
  if (text === "") return;
  const amount = amountDetailPath.exec(relative);
  if (amount && currency) {
    entry.amountDetails.push({ kind: amount[1] as string, amount: text, currency });
    return;
  }
  const exchange = exchangePath.exec(relative);
  if (exchange) entry.exchange[exchangeFields[exchange[1] as keyof typeof exchangeFields]] = text;
}

/** The foreign-currency detail of an entry in another currency than its account's. */
function foreignOf(
  entry: EntryDraft, accountCurrency: string, report: (f: Finding) => void,
): ForeignCurrencyDetail {
  const amounts: AmountDetail[] = [];
  for (const detail of entry.amountDetails) {
    const minor = decimalToMinor(detail.amount, detail.currency, { xmlPath: entry.xmlPath });
    if (!minor.ok) report(minor.error);
    else amounts.push({ kind: detail.kind, amountMinor: minor.value, currency: detail.currency });
  }
  return foreignCurrencyDetail(accountCurrency, amounts, entry.exchange);
}
