import type { Finding } from "../errors/finding.ts";
import type { Position } from "../errors/position.ts";
import type { AchEntry, AchRecord } from "../protocols/ach/types.ts";
import type { BusinessCalendar } from "../protocols/calendars/index.ts";
import type { Iso20022Header, Iso20022Transaction } from "../protocols/iso20022/types.ts";
import type { CanonicalRecord } from "./canonical-record.ts";
import { achEntryToCanonical } from "./from-ach.ts";
import { normalizeIso20022Transaction } from "./from-iso20022.ts";

/**
 * One record as it was received, whatever channel brought it (a file's entry or transaction, an
 * HTTP payment or refund, a card message), the record core's input: the canonical record (or the
 * finding that rejects it), its place (a file's line or xmlPath, a request), and the ids that link
 * returns to originals. Everything after it is channel-blind.
 */
export interface ReceivedRecord {
  index: number;                 // 1-based order among the file's records
  position: string;              // "line 12" or the transaction's xmlPath
  record?: CanonicalRecord;      // absent when the record is rejected
  rejection?: Finding;           // the record-level error that keeps it out
  linkIds: string[];             // at most 2 ids a return may name to find this record: ACH link key
                                 // (trace + RDFI) and "ach-trace:<trace>"; "uetr:..." and "e2e:..."
  originalIds: string[];         // for a return: at most 2 fallback ids of its original
}

/** Counterparty aliases: `aba:<routing 9>:<account>`, `iban:<IBAN>`, `acct:<id>`. */
export function parseAlias(text: string): string | undefined {
  const trimmed = text.trim();
  const aba = /^aba:(\d{9}):([^\s:]{1,34})$/.exec(trimmed);
  if (aba) return `aba:${aba[1]}:${aba[2]}`;
  const iban = /^iban:([A-Za-z]{2}\d{2}[A-Za-z0-9]{10,30})$/.exec(trimmed.replace(/\s+/g, ""));
  if (iban?.[1]) return `iban:${iban[1].toUpperCase()}`;
  const other = /^acct:(\S{1,64})$/.exec(trimmed);
  if (other) return `acct:${other[1]}`;
  return undefined;
}

/** An account identifier from an ISO 20022 message as an alias: an IBAN when it is one, else `acct:`. */
export function accountAlias(identifier: string | undefined): string | undefined {
  if (identifier === undefined) return undefined;
  const compact = identifier.replace(/\s+/g, "");
  if (compact === "") return undefined;
  return /^[A-Za-z]{2}\d{2}[A-Za-z0-9]{10,30}$/.test(compact) ? `iban:${compact.toUpperCase()}` : `acct:${compact}`;
}

const fieldText = (record: AchRecord, field: string) => (record.fields[field] ?? "").trim();

function firstError(findings: readonly Finding[]): Finding | undefined {
  return findings.find((f) => f.severity === "error");
}

export interface AchRecordContext {
  tenantId: string;
  fileId: string;
  fileHeader?: AchRecord;
  calendar?: BusinessCalendar;   // the partner's settlement calendar (docs/decisions/0101)
}

/** An ACH entry (with its addenda) -> ReceivedRecord. An entry-scope error rejects it only. */
export function achReceivedRecord(
  entry: AchEntry, index: number, context: AchRecordContext,
): ReceivedRecord {
  const position = `line ${entry.record.line}`;
  const rejected = entry.rejected ? firstError(entry.findings) : undefined;
  if (rejected) return { index, position, rejection: rejected, linkIds: [], originalIds: [] };
  const normalized = achEntryToCanonical(entry, context);
  if (!normalized.ok) return { index, position, rejection: normalized.error, linkIds: [], originalIds: [] };
  const record = normalized.value;
  const routing = fieldText(entry.record, "receivingDfiIdentification") + fieldText(entry.record, "checkDigit");
  const account = fieldText(entry.record, "dfiAccountNumber");
  if (/^\d{9}$/.test(routing) && account !== "") record.attributes.receiverAlias = `aba:${routing}:${account.replace(/\s+/g, "")}`;
  const trace = record.attributes.traceNumber;
  const originalTrace = record.attributes.originalEntryTraceNumber;
  return {
    index, position, record,
    linkIds: [record.attributes.linkKey, trace ? `ach-trace:${trace}` : undefined].filter((id): id is string => id !== undefined),
    originalIds: record.original !== undefined && originalTrace ? [`ach-trace:${originalTrace}`] : [],
  };
}

export interface IsoRecordContext {
  tenantId: string;
  fileId: string;
}

/** An ISO 20022 transaction -> ReceivedRecord. A transaction-scope error rejects it only. */
export function isoReceivedRecord(
  header: Iso20022Header, transaction: Iso20022Transaction, index: number,
  context: IsoRecordContext,
): ReceivedRecord {
  const position = transaction.xmlPath;
  const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: context.tenantId, fileId: context.fileId });
  if (!normalized.ok) {
    const error = firstError(normalized.error) ?? normalized.error[0];
    const rejection: Finding = error ?? { code: "ISO20022_KEY_UNAVAILABLE", severity: "error", message: "the transaction could not be normalized", position: { xmlPath: position } as Position };
    return { index, position, rejection, linkIds: [], originalIds: [] };
  }
  const record = normalized.value;
  const creditor = accountAlias(record.attributes.creditorAccount);
  const debtor = accountAlias(record.attributes.debtorAccount);
  if (creditor) record.attributes.creditorAlias = creditor;
  if (debtor) record.attributes.debtorAlias = debtor;
  const ids = (uetr: string | undefined, endToEndId: string | undefined) =>
    [uetr ? `uetr:${uetr}` : undefined, endToEndId ? `e2e:${endToEndId}` : undefined].filter((id): id is string => id !== undefined);
  return {
    index, position, record,
    linkIds: ids(record.attributes.uetr, record.attributes.endToEndId),
    originalIds: record.original !== undefined || record.kind === "return" ? ids(record.attributes.originalUetr, record.attributes.originalEndToEndId) : [],
  };
}
