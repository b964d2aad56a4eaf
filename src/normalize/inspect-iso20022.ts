import { createHash, type Hash } from "node:crypto";
import { limits } from "../config/limits.ts";
import { mappingFor } from "../protocols/iso20022/mapping.ts";
import { readIso20022Sync } from "../protocols/iso20022/reader.ts";
import type { Iso20022Finding, Iso20022Header, Iso20022Transaction } from "../protocols/iso20022/types.ts";
import { normalizeIso20022Transaction } from "./from-iso20022.ts";
import { settlementDayFinding } from "./settlement-day-finding.ts";
import type { InspectedRecord, InspectReport } from "./inspect-report.ts";

export interface InspectIso20022Options {
  fileName?: string;
  tenantId?: string;
  recordsMax?: number;
}

function identifierNames(family: string, version: string, level: "header" | "context" | "transaction"): string[] {
  const table = mappingFor(family, version)?.[level] ?? {};
  return Object.entries(table).filter(([, spec]) => spec.identifier).map(([name]) => name);
}

/**
 * `clearline inspect` for an ISO 20022 file, without a database: message type and version, group
 * header, findings with their xmlPath, and every transaction's identifiers as strings, its natural
 * key, fingerprint, kind, amount and link to an original.
 */
export function inspectIso20022(bytes: Buffer, options: InspectIso20022Options = {}): InspectReport {
  const recordsMax = options.recordsMax ?? limits.iso20022.inspectRecordsMax;
  const tenantId = options.tenantId ?? "inspect";
  const events = readIso20022Sync(bytes, options.fileName === undefined ? {} : { fileName: options.fileName });
  const report: InspectReport = { format: "iso20022", identity: {}, contentHash: "", header: {}, findings: [], findingsDropped: 0, records: [], recordCount: 0 };
  const contentHash = createHash("sha256");
  const findingsMax = limits.iso20022.findingsMax;
  const addFinding = (found: Iso20022Finding): void => {
    if (report.findings.length < findingsMax) report.findings.push(found);
    else report.findingsDropped++;
  };
  let header: Iso20022Header | undefined;
  let refused = false;
  for (const event of events) {
    if (event.type === "header") {
      header = event.header;
      describeHeader(report, header);
    } else if (event.type === "finding") {
      addFinding(event.finding);
    } else if (event.type === "transaction") {
      report.recordCount++;
      for (const found of event.transaction.findings) addFinding(found);
      if (header) inspectTransaction(report, header, event.transaction, { tenantId, recordsMax, addFinding, contentHash });
    } else if (event.type === "end") {
      report.findingsDropped += event.summary.findingsDropped;
      refused = !event.summary.complete;
    }
  }
  // A refused (or empty) message has no normalized content to hash: its bytes are its content,
  // so two different refused files never share a hash (the hash of nothing).
  report.contentHash = refused || report.recordCount === 0 ? createHash("sha256").update(bytes).digest("hex") : contentHash.digest("hex");
  return report;
}

/** The message's type, group header values and the file's identity (message id and sender). */
function describeHeader(report: InspectReport, header: Iso20022Header): void {
  report.messageType = header.message.id;
  report.header = { ...header.values };
  if (header.message.localVariant) report.header["localVariant"] = header.message.localVariant;
  if (header.wrapper.length > 0) report.header["wrapper"] = header.wrapper.join("/");
  for (const [name, value] of Object.entries(header.appHeader?.values ?? {})) report.header[`AppHdr.${name}`] = value;
  const messageId = header.values["MsgId"] ?? header.values["AssgnmtId"] ?? header.appHeader?.values["BizMsgIdr"];
  if (messageId !== undefined) report.identity["MsgId"] = messageId;
  const sender = header.values["InstgAgtBIC"] ?? header.values["InstgAgtMmbId"] ?? header.values["AssgnrBIC"] ?? header.values["AssgnrMmbId"]
    ?? header.appHeader?.values["FrBIC"] ?? header.appHeader?.values["FrMmbId"] ?? header.values["InitgPtyOrgId"] ?? header.values["InitgPtyNm"];
  if (sender !== undefined) report.identity["sender"] = sender;
  report.identity["messageType"] = header.message.id;
}

/** One transaction: its identifiers as strings, and its natural key, fingerprint and amount (or that it is rejected). */
function inspectTransaction(report: InspectReport, header: Iso20022Header, transaction: Iso20022Transaction,
  run: { tenantId: string; recordsMax: number; addFinding: (found: Iso20022Finding) => void; contentHash: Hash }): void {
  const { family, version } = header.message;
  const identifiers: Record<string, string> = {};
  for (const name of identifierNames(family, version, "context")) {
    const value = transaction.context?.values[name];
    if (value !== undefined) identifiers[name] = value;
  }
  for (const name of identifierNames(family, version, "transaction")) {
    const value = transaction.values[name];
    if (value !== undefined) identifiers[name] = value;
  }
  const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: run.tenantId });
  if (!normalized.ok) {
    for (const found of normalized.error) if (!transaction.findings.includes(found)) run.addFinding(found);
    run.contentHash.update(`rejected:${transaction.xmlPath}\n`);
    if (report.records.length < run.recordsMax) {
      report.records.push({ position: transaction.xmlPath, kind: "rejected", naturalKey: "", fingerprint: "", intentId: "", amountMinor: "0", currency: "", valueDate: "", identifiers });
    }
    return;
  }
  const record = normalized.value;
  const closed = settlementDayFinding(record, transaction.xmlPath);
  if (closed) run.addFinding(closed);
  run.contentHash.update(`${record.naturalKey}\u0000${record.fingerprint}\n`);
  if (report.records.length >= run.recordsMax) return;
  const inspected: InspectedRecord = {
    position: transaction.xmlPath, kind: record.kind, naturalKey: record.naturalKey, fingerprint: record.fingerprint, intentId: record.intentId,
    amountMinor: record.amount.toString(), currency: record.currency, valueDate: record.valueDate, identifiers,
  };
  if (record.original !== undefined) inspected.original = record.original;
  report.records.push(inspected);
}
