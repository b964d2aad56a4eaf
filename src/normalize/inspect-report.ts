import type { Finding } from "../errors/finding.ts";

/**
 * What `clearline inspect` prints for a file, without a database: the operator's first look at a
 * partner's file before anything is posted.
 */
export interface InspectedRecord {
  position: string;               // "line 12" or an xmlPath
  kind: string;
  naturalKey: string;
  fingerprint: string;
  intentId: string;
  amountMinor: string;            // bigint as a decimal string (JSON has no bigint)
  currency: string;
  valueDate: string;
  original?: string;
  identifiers: Record<string, string>; // e.g. traceNumber, UETR, EndToEndId, OrgnlTxId (strings, leading zeros kept)
}

export interface InspectReport {
  format: "ach" | "iso20022";
  messageType?: string;           // e.g. "pacs.008.001.08"
  identity: Record<string, string>; // the file's own identity (ACH header fields; MsgId + agent)
  contentHash: string;            // hash of the normalized content
  header: Record<string, string>;
  findings: Finding[];
  findingsDropped: number;
  records: InspectedRecord[];
  recordCount: number;
}
