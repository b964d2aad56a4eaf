import { limits } from "../config/limits.ts";
import { AchParser } from "../protocols/ach/reader.ts";
import type { AchEntry, AchRecord } from "../protocols/ach/types.ts";
import { AchContentHash, achEntryToCanonical, achFileIdentity, type AchFileIdentity } from "./from-ach.ts";
import type { InspectedRecord, InspectReport } from "./inspect-report.ts";

export interface InspectAchOptions {
  fileName?: string;
  tenantId?: string;
  recordsMax?: number;      // records listed (all are counted); default limits.ach.inspectRecordsMax
}

/**
 * `clearline inspect` for an ACH file, without a database: format, file identity, every finding
 * with its position, and each entry's natural key, fingerprint, kind and amount.
 */
export function inspectAch(bytes: Buffer, options: InspectAchOptions = {}): InspectReport {
  const recordsMax = options.recordsMax ?? limits.ach.inspectRecordsMax;
  const tenantId = options.tenantId ?? "inspect";
  const records: InspectedRecord[] = [];
  let recordCount = 0;
  let fileHeader: AchRecord | undefined;
  let identity: AchFileIdentity | undefined;
  let contentHash = new AchContentHash();

  const onEntry = (entry: AchEntry) => {
    recordCount++;
    const normalized = achEntryToCanonical(entry, fileHeader ? { tenantId, fileHeader } : { tenantId });
    if (!normalized.ok) return;
    const record = normalized.value;
    contentHash.add(record);
    if (records.length >= recordsMax) return;
    const inspected: InspectedRecord = {
      position: record.source.position ?? `line ${entry.record.line}`,
      kind: record.kind,
      naturalKey: record.naturalKey,
      fingerprint: record.fingerprint,
      intentId: record.intentId,
      amountMinor: record.amount.toString(),
      currency: record.currency,
      valueDate: record.valueDate,
      identifiers: { ...record.attributes, rejected: String(entry.rejected) },
    };
    if (record.original !== undefined) inspected.original = record.original;
    records.push(inspected);
  };

  const parser = new AchParser((event) => {
    if (event.type === "fileHeader") {
      fileHeader = event.record;
      identity = achFileIdentity(event.record);
      contentHash = new AchContentHash(identity);
    } else if (event.type === "entry") {
      onEntry(event.entry);
    }
  }, options.fileName ? { fileName: options.fileName } : {});
  parser.push(bytes);
  const summary = parser.finish();

  const header: Record<string, string> = {};
  for (const [name, value] of Object.entries(fileHeader?.fields ?? {})) if (name !== "recordTypeCode") header[name] = value.trim();
  const identityFields: Record<string, string> = {};
  if (identity) for (const [name, value] of Object.entries(identity)) identityFields[name] = value;
  return {
    format: "ach",
    identity: identityFields,
    contentHash: contentHash.digest(),
    header,
    findings: summary.findings,
    findingsDropped: summary.findingsDropped,
    records,
    recordCount,
  };
}
