import type { Finding } from "../../errors/finding.ts";
import type { MessageIdentifier } from "./message-identifier.ts";

/**
 * Whether a finding condemns the whole file (bad XML, counts that do not add up, an unsupported
 * message) or one transaction only (a bad UETR, a missing EndToEndId): the ingestion pipeline
 * rejects the file or just that transaction accordingly.
 */
export type FindingScope = "file" | "transaction";

export interface Iso20022Finding extends Finding {
  scope: FindingScope;
}

/** Mapped values of one block (header, context or transaction): strings as written, with where each was found. */
export interface FieldValues {
  values: Record<string, string>;   // field name -> text; amounts also give "<name>@Ccy"
  xmlPaths: Record<string, string>; // field name -> absolute xmlPath of the element it came from
}

export interface Iso20022Header extends FieldValues {
  message: MessageIdentifier;
  namespace: string;
  wrapper: string[];                // local names of the elements around Document, outermost first ([] when bare)
  appHeader?: FieldValues;          // head.001 business application header, when present
  rootXmlPath: string;              // "/Document/FIToFICstmrCdtTrf"
}

export interface Iso20022Context extends FieldValues {
  index: number;                    // 1-based among the file's context blocks (PmtInf, Stmt, Undrlyg...)
  xmlPath: string;
}

export interface Iso20022Transaction extends FieldValues {
  index: number;                    // 1-based ordinal in the file
  xmlPath: string;                  // "/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf[1]"
  element: string;                  // CdtTrfTxInf, TxInfAndSts, TxInf, Ntry
  context?: Iso20022Context;        // the PmtInf (pain.001), Stmt (camt.053)... it sits in
  findings: Iso20022Finding[];      // scope "transaction": reject this transaction, not the file
}

export interface Iso20022Summary {
  message?: MessageIdentifier;
  transactionCount: number;
  complete: boolean;                // false when reading stopped early on a file-scope error
  fileErrorCount: number;
  warningCount: number;
  transactionErrorCount: number;    // transactions carrying at least one error
  findingsDropped: number;          // findings counted but not kept (beyond findingsMax)
}

/**
 * What the streaming reader yields, in document order: one header (before the first transaction),
 * then transactions and file-scope findings, then one end. A file-scope error may come after
 * transactions (NbOfTxs and CtrlSum are known only at the end): hold the file's records until `end`.
 */
export type Iso20022Event =
  | { type: "header"; header: Iso20022Header }
  | { type: "transaction"; transaction: Iso20022Transaction }
  | { type: "finding"; finding: Iso20022Finding }
  | { type: "end"; summary: Iso20022Summary };
