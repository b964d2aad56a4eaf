import { createHash } from "node:crypto";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { transactionCodeInfo } from "../protocols/ach/codes.ts";
import { isValidDate } from "../protocols/ach/fixed-width.ts";
import type { AchEntry, AchRecord } from "../protocols/ach/types.ts";
import { companyIdentificationOf } from "../protocols/ach/validator.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";
import type { CanonicalRecord } from "./canonical-record.ts";
import { fingerprintOf } from "./fingerprint.ts";
import { achDefaultCalendar, achSettlementDate } from "./settlement-date.ts";
import type { BusinessCalendar } from "../protocols/calendars/index.ts";

/** The file's own identity, from its header: two uploads of one file share it. */
export interface AchFileIdentity {
  immediateDestination: string;
  immediateOrigin: string;
  fileCreationDate: string;    // YYMMDD as in the file
  fileCreationTime: string;    // HHMM, may be blank
  fileIdModifier: string;
  key: string;                 // "ach-file:<destination>:<origin>:<date>:<time>:<modifier>"
}

export interface AchNormalizeContext {
  tenantId: string;
  fileId?: string;             // the receipt's id, carried into source.fileId
  fileHeader?: AchRecord;      // gives a value date when an effective entry date is unusable
  /** The partner's settlement calendar (0092); the Federal Reserve's when not given. */
  calendar?: BusinessCalendar;
}

const text = (record: AchRecord | undefined, field: string) => (record?.fields[field] ?? "").trim();

export function achFileIdentity(fileHeader: AchRecord): AchFileIdentity {
  const identity = {
    immediateDestination: text(fileHeader, "immediateDestination"),
    immediateOrigin: text(fileHeader, "immediateOrigin"),
    fileCreationDate: text(fileHeader, "fileCreationDate"),
    fileCreationTime: text(fileHeader, "fileCreationTime"),
    fileIdModifier: text(fileHeader, "fileIdModifier"),
  };
  return { ...identity, key: ["ach-file", identity.immediateDestination, identity.immediateOrigin, identity.fileCreationDate, identity.fileCreationTime, identity.fileIdModifier].join(":") };
}

/**
 * The file creation date and time (header fields 9 and 10) back from an ACH file identity key, as
 * "YYYY-MM-DD HH:MM" (time left out when blank); undefined for a key that is not an ACH file's.
 * Shown to an operator deciding on a review item that another file caused.
 */
export function achFileCreationOfKey(identityKey: string): string | undefined {
  const parts = identityKey.split(":");
  if (parts[0] !== "ach-file" || parts.length !== 6) return undefined;
  const date = /^(\d\d)(\d\d)(\d\d)$/.exec(parts[3] ?? "");
  if (!date) return undefined;
  const day = `20${date[1]}-${date[2]}-${date[3]}`;
  const time = /^(\d\d)(\d\d)$/.exec(parts[4] ?? "");
  return time ? `${day} ${time[1]}:${time[2]}` : day;
}

/**
 * What a return or NOC and its original both know: the original's trace and RDFI. A forward
 * entry carries its own link key; a return names its original's through `original`. The RDFI in
 * a return's addenda can be wrong, so the pipeline also looks the original up by trace alone,
 * confirming by amount.
 */
export function achLinkKey(traceNumber: string, receivingDfiIdentification: string): string {
  return `ach-link:${traceNumber.trim()}:${receivingDfiIdentification.trim()}`;
}

/** YYMMDD -> YYYY-MM-DD (NACHA dates are this century). */
export function achDateToIso(yymmdd: string): string | undefined {
  if (!isValidDate(yymmdd)) return undefined;
  return `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
}

/**
 * Natural key of an ACH entry: ODFI (trace[0:8]) + trace + company id + SEC + effective entry
 * date. Never the batch number: merged and corrected files renumber batches.
 */
export function achNaturalKey(entry: AchEntry): string {
  const trace = text(entry.record, "traceNumber");
  const header = entry.batchHeader;
  const parts = ["ach", trace.slice(0, 8), trace, companyIdentificationOf(header).trim(), text(header, "standardEntryClassCode"), text(header, "effectiveEntryDate")];
  // A return or NOC is its own record even when its processor kept the forward's trace and batch
  // header: its kind is part of its key, so it is never taken for a correction of its forward.
  const kind = kindOf(entry);
  if (linkedKinds.has(kind)) parts.push(kind);
  return parts.join(":");
}

/** Kinds of entry that answer an earlier one (addenda 99 or 98): a return file holds only these. */
export const achLinkedKinds: readonly string[] = [
  "return", "dishonored-return", "contested-return", "noc",
];
const linkedKinds = new Set(achLinkedKinds);

function kindOf(entry: AchEntry): string {
  const returnAddenda = entry.addenda.find((a) => a.layout.startsWith("addenda-99"));
  if (returnAddenda?.layout === "addenda-99-dishonored") return "dishonored-return";
  if (returnAddenda?.layout === "addenda-99-contested") return "contested-return";
  if (returnAddenda) return "return";
  if (entry.addenda.some((a) => a.layout === "addenda-98")) return "noc";
  const info = transactionCodeInfo(text(entry.record, "transactionCode"));
  if (info?.purpose === "prenote") return "prenote";
  return info?.direction ?? "unknown";
}

/** The addenda payloads, each field normalized, in order: part of the economic content. */
function addendaPayload(entry: AchEntry): string {
  return entry.addenda.map((a) => Object.entries(a.fields)
    .filter(([name]) => name !== "recordTypeCode" && !name.startsWith("reserved") && name !== "traceNumber")
    .map(([name, value]) => `${name}=${value.trim()}`).join("|")).join("\n");
}

/**
 * One entry (with its addenda) -> CanonicalRecord. Fails (a value, never a throw) when the entry
 * lacks what a record needs: a numeric amount and trace number.
 */
export function achEntryToCanonical(entry: AchEntry, context: AchNormalizeContext): Result<CanonicalRecord, Finding> {
  const record = entry.record;
  const header = entry.batchHeader;
  const position = { line: record.line, recordType: "6" };
  const amount = text(record, "amount");
  if (!/^\d+$/.test(amount)) return fail(finding("ACH_FIELD_NOT_NUMERIC", `line ${record.line}: amount is not numeric`, { ...position, field: "amount" }));
  const trace = text(record, "traceNumber");
  if (!/^\d{15}$/.test(trace)) return fail(finding("ACH_FIELD_NOT_NUMERIC", `line ${record.line}: trace number is not 15 digits`, { ...position, field: "traceNumber" }));
  const sec = text(header, "standardEntryClassCode");
  const destinationCurrency = text(header, "isoDestinationCurrencyCode");
  const currency = sec === "IAT" && currencyByCode(destinationCurrency) ? destinationCurrency : "USD";
  const valueDate = achDateToIso(text(header, "effectiveEntryDate")) ?? achDateToIso(text(context.fileHeader, "fileCreationDate")) ?? "1970-01-01";
  const rdfi = text(record, "receivingDfiIdentification");
  const kind = kindOf(entry);
  const link = entry.addenda.find((a) => a.layout.startsWith("addenda-99") || a.layout === "addenda-98");
  const originalTrace = text(link, "originalEntryTraceNumber");

  const attributes: Record<string, string> = {
    transactionCode: text(record, "transactionCode"),
    standardEntryClassCode: sec,
    traceNumber: trace,
    receivingDfiIdentification: rdfi,
    originatingDfiIdentification: trace.slice(0, 8),
    companyIdentification: companyIdentificationOf(header).trim(),
    linkKey: achLinkKey(trace, rdfi),
    batchNumber: text(header, "batchNumber"),
  };
  if (link) {
    attributes.originalEntryTraceNumber = originalTrace;
    attributes.originalReceivingDfiIdentification = text(link, "originalReceivingDfiIdentification");
    const reason = text(link, "returnReasonCode") || text(link, "changeCode");
    if (reason) attributes.reasonCode = reason;
    // A return should carry a return transaction code (21, 26, ...); some processors keep the forward's.
    const purpose = transactionCodeInfo(attributes.transactionCode ?? "")?.purpose;
    if (purpose !== "return") attributes.linkWarning = `transaction code ${attributes.transactionCode} is not a return code`;
  }

  const canonical: CanonicalRecord = {
    tenantId: context.tenantId,
    channel: "ach",
    naturalKey: achNaturalKey(entry),
    // A return belongs to the payment it returns: its intent is the original's trace.
    intentId: `ach:${link ? originalTrace : trace}`,
    kind,
    amount: BigInt(amount),
    currency,
    valueDate,
    fingerprint: fingerprintOf({
      transactionCode: record.fields.transactionCode,
      receivingDfiIdentification: rdfi + text(record, "checkDigit"),
      dfiAccountNumber: record.fields.dfiAccountNumber,
      amount: BigInt(amount),
      individualIdentificationNumber: record.fields.individualIdentificationNumber ?? record.fields.identificationNumber,
      individualName: record.fields.individualName ?? record.fields.receivingCompanyName,
      discretionaryData: record.fields.discretionaryData,
      addenda: addendaPayload(entry),
      companyName: header.fields.companyName ?? header.fields.originatorIdentification,
      companyEntryDescription: header.fields.companyEntryDescription,
      companyDescriptiveDate: header.fields.companyDescriptiveDate,
    }),
    source: { position: `line ${record.line}` },
    attributes,
  };
  if (context.fileId !== undefined) canonical.source.fileId = context.fileId;
  const settlementDate = entrySettlementDate(valueDate, context);
  if (settlementDate !== undefined) canonical.settlementDate = settlementDate;
  if (link) canonical.original = achLinkKey(originalTrace, text(link, "originalReceivingDfiIdentification"));
  return ok(canonical);
}

/**
 * The entry's settlement date (docs/decisions/0101): its value date rolled on the partner's
 * calendar, same-day when its file was created that day by the last window. Undefined when the
 * calendar cannot place the date (outside its years): the transfer settles on its value date.
 */
function entrySettlementDate(valueDate: string, context: AchNormalizeContext): string | undefined {
  const created = achDateToIso(text(context.fileHeader, "fileCreationDate"));
  const time = text(context.fileHeader, "fileCreationTime");
  const delivery = {
    ...(created === undefined ? {} : { fileCreationDate: created }),
    ...(time === "" ? {} : { fileCreationTimeHhmm: time }),
  };
  const settled = achSettlementDate(context.calendar ?? achDefaultCalendar, valueDate, delivery);
  return settled.ok ? settled.value : undefined;
}

/**
 * Hash of a file's normalized content for its receipt: the file identity, then every record's
 * natural key and fingerprint in file order. Line endings, padding and trailing blanks do not
 * change it; any economic change does.
 */
export class AchContentHash {
  private readonly hash = createHash("sha256");

  constructor(identity?: AchFileIdentity) {
    this.hash.update(`identity\u0000${identity?.key ?? ""}\u0001`);
  }

  add(record: Pick<CanonicalRecord, "naturalKey" | "fingerprint">): void {
    this.hash.update(`${record.naturalKey}\u0000${record.fingerprint}\u0001`);
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}
