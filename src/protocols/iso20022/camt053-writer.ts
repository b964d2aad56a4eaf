import { XMLBuilder } from "fast-xml-parser";
import { assert } from "../../assert.ts";
import { fail, ok, type Result } from "../../errors/finding.ts";
import { minorToDecimal } from "../iso4217/currency.ts";
import type { Iso20022Finding } from "./types.ts";

/**
 * A camt.053.001.08 end-of-day statement of one account (issue 30 item 5): the opening and
 * closing booked balances (OPBD, CLBD) and one Ntry per entry booked that day. Pure: the caller
 * passes every value, the creation time included. Directions are the account holder's: C raises
 * the balance (CRDT), D lowers it (DBIT); balances are signed the same way (negative: DBIT).
 */
export interface Camt053Entry {
  entryRef: string;             // NtryRef, Max35Text: the entry's number in the statement
  accountServicerRef: string;   // AcctSvcrRef, Max35Text: stable over re-issues of the statement
  amountMinor: bigint;          // > 0
  direction: "C" | "D";
  bookingDate: string;          // BookgDt/Dt, YYYY-MM-DD
  valueDate: string;            // ValDt/Dt, YYYY-MM-DD
  bankTransactionCode: string;  // BkTxCd/Prtry/Cd, Max35Text
  additionalInformation?: string; // AddtlNtryInf, Max500Text
}

export interface Camt053Input {
  messageId: string;            // GrpHdr/MsgId, Max35Text
  creationDateTime: string;     // GrpHdr/CreDtTm and Stmt/CreDtTm (ISO date-time)
  statementId: string;          // Stmt/Id, Max35Text
  accountId: string;            // Acct/Id/Othr/Id, Max34Text
  accountName?: string;         // Acct/Nm, Max70Text
  currency: string;             // Acct/Ccy and every Amt@Ccy
  openingDate: string;          // OPBD Dt: the day before the statement's
  statementDate: string;        // CLBD Dt
  openingMinor: bigint;
  closingMinor: bigint;
  entries: readonly Camt053Entry[];
}

const builder = new XMLBuilder({
  ignoreAttributes: false, attributeNamePrefix: "@_", format: true, indentBy: "  ",
  suppressEmptyNode: true, processEntities: true,
});

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Texts past the schema's length: bad input, named at its path. */
function lengthFindings(input: Camt053Input): Iso20022Finding[] {
  const checks: Array<[string | undefined, number, string]> = [
    [input.messageId, 35, "/Document/BkToCstmrStmt/GrpHdr/MsgId"],
    [input.statementId, 35, "/Document/BkToCstmrStmt/Stmt/Id"],
    [input.accountId, 34, "/Document/BkToCstmrStmt/Stmt/Acct/Id/Othr/Id"],
    [input.accountName, 70, "/Document/BkToCstmrStmt/Stmt/Acct/Nm"],
  ];
  input.entries.forEach((entry, i) => {
    const at = `/Document/BkToCstmrStmt/Stmt/Ntry[${i + 1}]`;
    checks.push([entry.entryRef, 35, `${at}/NtryRef`],
      [entry.accountServicerRef, 35, `${at}/AcctSvcrRef`],
      [entry.bankTransactionCode, 35, `${at}/BkTxCd/Prtry/Cd`],
      [entry.additionalInformation, 500, `${at}/AddtlNtryInf`]);
  });
  return checks
    .filter(([text, max]) => text !== undefined && (text.length === 0 || text.length > max))
    .map(([text, max, xmlPath]) => ({
      code: "ISO20022_FIELD_TOO_LONG", severity: "error", scope: "file", position: { xmlPath },
      message: `${xmlPath.split("/").pop() ?? ""} is 1 to ${max} characters, not ${text?.length}`,
    }));
}

function balance(code: "OPBD" | "CLBD", minor: bigint, currency: string, date: string): object {
  return {
    Tp: { CdOrPrtry: { Cd: code } },
    Amt: { "@_Ccy": currency, "#text": minorToDecimal(minor < 0n ? -minor : minor, currency) },
    CdtDbtInd: minor < 0n ? "DBIT" : "CRDT",
    Dt: { Dt: date },
  };
}

function entryElement(entry: Camt053Entry, currency: string): object {
  return {
    NtryRef: entry.entryRef,
    Amt: { "@_Ccy": currency, "#text": minorToDecimal(entry.amountMinor, currency) },
    CdtDbtInd: entry.direction === "C" ? "CRDT" : "DBIT",
    Sts: { Cd: "BOOK" },
    BookgDt: { Dt: entry.bookingDate },
    ValDt: { Dt: entry.valueDate },
    AcctSvcrRef: entry.accountServicerRef,
    BkTxCd: { Prtry: { Cd: entry.bankTransactionCode } },
    ...(entry.additionalInformation === undefined
      ? {} : { AddtlNtryInf: entry.additionalInformation }),
  };
}

/** Asserts what the caller computed: the entries sum from the opening to the closing balance. */
function assertConsistent(input: Camt053Input): void {
  assert(DATE.test(input.openingDate) && DATE.test(input.statementDate), "statement dates");
  let sumMinor = 0n;
  for (const entry of input.entries) {
    assert(entry.amountMinor > 0n, `entry ${entry.entryRef} has a positive amount`);
    assert(DATE.test(entry.bookingDate) && DATE.test(entry.valueDate), "entry dates");
    sumMinor += entry.direction === "C" ? entry.amountMinor : -entry.amountMinor;
  }
  assert(input.openingMinor + sumMinor === input.closingMinor,
    "a statement's opening balance plus its entries is its closing balance");
}

export function writeCamt053(input: Camt053Input): Result<string, Iso20022Finding[]> {
  const findings = lengthFindings(input);
  if (findings.length > 0) return fail(findings);
  assertConsistent(input);
  const credits = input.entries.filter((e) => e.direction === "C");
  const debits = input.entries.filter((e) => e.direction === "D");
  const total = (entries: Camt053Entry[]) => minorToDecimal(
    entries.reduce((sum, e) => sum + e.amountMinor, 0n), input.currency);
  const document = {
    Document: {
      "@_xmlns": "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08",
      BkToCstmrStmt: {
        GrpHdr: { MsgId: input.messageId, CreDtTm: input.creationDateTime },
        Stmt: {
          Id: input.statementId,
          CreDtTm: input.creationDateTime,
          Acct: {
            Id: { Othr: { Id: input.accountId } }, Ccy: input.currency,
            ...(input.accountName === undefined ? {} : { Nm: input.accountName }),
          },
          Bal: [
            balance("OPBD", input.openingMinor, input.currency, input.openingDate),
            balance("CLBD", input.closingMinor, input.currency, input.statementDate),
          ],
          TxsSummry: {
            TtlNtries: { NbOfNtries: String(input.entries.length) },
            TtlCdtNtries: { NbOfNtries: String(credits.length), Sum: total(credits) },
            TtlDbtNtries: { NbOfNtries: String(debits.length), Sum: total(debits) },
          },
          Ntry: input.entries.map((entry) => entryElement(entry, input.currency)),
        },
      },
    },
  };
  return ok(`<?xml version="1.0" encoding="UTF-8"?>\n${builder.build(document) as string}`);
}
